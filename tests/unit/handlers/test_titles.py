"""A thread's conversation is named after the thread once: UserPromptSubmit's ``sessionTitle``
only while Claude Code's ``session_title`` is not that name already."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bridge.config import ThreadEntry
from bridge.handlers.titles import session_title
from bridge.state import runtime
from bridge_testkit import hook_input

THREAD = "100000000000000009"


def context(tmp_path, thread_id: str | None, name: object, title: object = None):
    extra = {} if title is None else {"session_title": title}
    event = hook_input("UserPromptSubmit", cwd=tmp_path, prompt="hi", **extra)
    project = SimpleNamespace(threads=[ThreadEntry({"name": name, "channelId": THREAD})])
    rt = runtime.Runtime(str(tmp_path / "rt"))
    return SimpleNamespace(thread_id=thread_id, project=project, event=event, runtime=rt)


def named(answer: dict | None) -> str | None:
    return answer["hookSpecificOutput"]["sessionTitle"] if answer else None


@pytest.mark.parametrize(
    ("name", "title", "sent"),
    [
        ("fix the login bug", None, "fix the login bug"),  # not named yet
        ("fix the login bug", "make a file", "fix the login bug"),  # Claude Code's own guess
        ("fix the login bug", "fix the login bug", None),  # named already
        ("fix the login bug", "fix the login bug (Branch)", None),  # a branch keeps its own
        ("two\nlines \x1b[31m  here", None, "two lines [31m here"),  # one plain line
        ("", None, None),
        (None, None, None),
    ],
)
def test_a_thread_is_named_once(tmp_path, name, title, sent) -> None:
    answer = session_title(context(tmp_path, THREAD, name, title))
    assert named(answer) == sent
    if answer is not None:
        assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


def test_a_channels_session_is_not_named(tmp_path) -> None:
    assert session_title(context(tmp_path, None, "fix the login bug")) is None


def test_a_long_name_is_cut(tmp_path) -> None:
    assert len(named(session_title(context(tmp_path, THREAD, "x" * 300))) or "") == 100
