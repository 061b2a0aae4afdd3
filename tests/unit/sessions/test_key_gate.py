"""The key gate (``bridge/sessions/key_gate.py``) against a real tmux pane on a private socket
that draws Claude Code's input box or a dialog, then echoes every key it gets (``cat -v``),
with real request, screen-prompt and tool-start files in a runtime dir."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.claude.dialogs import read_dialog
from bridge.sessions import key_gate, pane_ops
from bridge.sessions.key_gate import KeysRefused, SessionKeys
from bridge.state import decisions, held_messages, runtime, tool_calls
from bridge.state.decisions import Decision, Request
from bridge.tmux import TmuxSessions

CHANNEL = "100000000000000021"
OTHER = "100000000000000022"
BOX = ("────", "❯ ", "────", "  ⏸ plan mode on")
DIALOG = ("Do you want to create x.txt?", "❯ 1. Yes", "  2. Yes, allow all edits", "  3. No")


@pytest.fixture
def tmux(tmp_path) -> Iterator[TmuxSessions]:
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    yield TmuxSessions("unit", socket)
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "rt")).ensure()


@pytest.fixture
def hook() -> Iterator[subprocess.Popen]:
    """A live process standing for a waiting PermissionRequest hook."""
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def draw(tmux: TmuxSessions, lines: tuple[str, ...], tmp_path: Path, key: str = CHANNEL) -> str:
    drawing = "printf '%s\\n' " + " ".join(f"'{line}'" for line in lines) + "; exec cat -v"
    pane = tmux.start(key, "ui", str(tmp_path), ["sh", "-c", drawing], {})
    tmux.wait_for(pane.pane_id, lambda screen: lines[-1].strip() in screen, 5.0)
    return pane.pane_id


def keys_seen(tmux: TmuxSessions, pane_id: str, lines: tuple[str, ...]) -> str:
    """What reached the pane after its drawing: a marker typed last shows everything did (one
    more marker than before: an earlier call's is on the screen already)."""
    before = tmux.capture(pane_id).count("END")
    tmux.type_literal(pane_id, "END")
    screen = tmux.wait_for(pane_id, lambda s: s.count("END") > before, 5.0)
    return screen.split(lines[-1])[-1].strip()


def ask(rt: runtime.Runtime, pid: int, kind: str = "permission", channel: str = CHANNEL) -> str:
    now = time.time()
    request = Request(
        id=decisions.new_id(),
        kind=kind,
        channel_id=channel,
        pid=pid,
        created=now,
        deadline=now + 900,
    )
    decisions.write_request(rt, request)
    return request.id


def test_an_open_prompt_of_the_session_refuses_every_key_until_its_hook_is_gone(
    tmux, rt, hook, tmp_path
) -> None:
    pane = draw(tmux, BOX, tmp_path)
    keys = SessionKeys(tmux, pane, rt, CHANNEL)
    ask(rt, hook.pid, channel=OTHER)  # another session's prompt: nothing to do with this one
    keys.press("a")
    request_id = ask(rt, hook.pid)
    for action in (
        lambda: keys.press("Enter"),
        lambda: keys.type_literal("1"),
        lambda: keys.paste("1\t"),
        lambda: pane_ops.send_keys(keys, "2 Enter"),
        lambda: pane_ops.interrupt(keys),
        lambda: pane_ops.cycle_mode(keys, "default"),
    ):
        with pytest.raises(KeysRefused, match="Answer the permission prompt first"):
            action()
    # Decided on Discord, the hook not yet done: its dialog may still take a key.
    decisions.decide(rt, request_id, Decision(outcome="deny"))
    with pytest.raises(KeysRefused):
        keys.press("Enter")
    assert keys_seen(tmux, pane, BOX) == "aEND"
    hook.kill()
    hook.wait()
    keys.press("b")  # the hook has gone: so has its dialog
    assert keys_seen(tmux, pane, BOX).startswith("aENDb")


def test_the_refusal_names_the_prompt_to_answer(tmux, rt, hook, tmp_path) -> None:
    keys = SessionKeys(tmux, draw(tmux, BOX, tmp_path), rt, CHANNEL)
    ask(rt, hook.pid, kind="question")
    with pytest.raises(KeysRefused) as refused:
        keys.require_input_box("the mode switch (Shift+Tab)")
    assert str(refused.value) == (
        "Claude Code is asking a question in this session (see its prompt in this channel): "
        "the mode switch (Shift+Tab) was not sent, so it cannot answer that dialog. Answer the "
        "question prompt first."
    )


def test_an_open_screen_prompt_takes_only_its_own_answers(tmux, rt, hook, tmp_path) -> None:
    pane = draw(tmux, DIALOG, tmp_path)
    dialog = read_dialog(tmux.capture(pane))
    assert dialog is not None
    held_messages.save(rt, CHANNEL, {"fingerprint": dialog.fingerprint, "prompt_message_id": "9"})
    with pytest.raises(KeysRefused, match="Answer the screen prompt first") as refused:
        pane_ops.send_keys(SessionKeys(tmux, pane, rt, CHANNEL), "Enter")
    assert refused.value.screen  # a message meeting it is held (bot/prompts/screens.py)
    answer = SessionKeys(tmux, pane, rt, CHANNEL, screen_answer=True)
    answer.press("3")
    # A hook's prompt is answered through that prompt, not through a screen prompt.
    ask(rt, hook.pid)
    with pytest.raises(KeysRefused, match="permission prompt"):
        answer.press("1")
    assert keys_seen(tmux, pane, DIALOG) == "3END"
    # A screen prompt whose dialog is gone (answered in the terminal) refuses nothing.
    hook.kill()
    hook.wait()
    held_messages.save(rt, CHANNEL, {"fingerprint": "0" * 12, "prompt_message_id": "9"})
    SessionKeys(tmux, pane, rt, CHANNEL).press("x")


def test_a_tool_call_just_started_holds_keys_until_it_ends_or_the_grace_is_over(
    tmux, rt, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(key_gate, "TOOL_GRACE", 0.5)
    keys = SessionKeys(tmux, draw(tmux, BOX, tmp_path), rt, CHANNEL)
    tool_calls.started(rt, CHANNEL, "toolu_long")
    began = time.monotonic()
    keys.require_input_box("the interrupt (Escape)")  # no dialog came: the keys may go
    assert time.monotonic() - began >= 0.45
    # A call that ends (its PostToolUse) asks nothing more: the wait ends with it.
    tool_calls.started(rt, CHANNEL, "toolu_quick")
    threading.Timer(0.1, tool_calls.finished, (rt, CHANNEL, "toolu_quick")).start()
    began = time.monotonic()
    keys.press("x")
    assert time.monotonic() - began < 0.4


def test_a_dialog_that_comes_during_the_grace_refuses_the_keys(
    tmux, rt, hook, tmp_path, monkeypatch
) -> None:
    pane = draw(tmux, BOX, tmp_path)
    keys = SessionKeys(tmux, pane, rt, CHANNEL)
    tool_calls.started(rt, CHANNEL, "toolu_write")
    threading.Timer(0.2, ask, (rt, hook.pid)).start()  # the PermissionRequest hook's request
    began = time.monotonic()
    with pytest.raises(KeysRefused, match="permission prompt"):
        keys.press("BTab")
    assert time.monotonic() - began < key_gate.TOOL_GRACE  # refused at once, not after it
    assert keys_seen(tmux, pane, BOX) == "END"

    # No request yet but the dialog on screen (its hook slow to start): refused too.
    monkeypatch.setattr(key_gate, "TOOL_GRACE", 0.2)
    dialog = SessionKeys(tmux, draw(tmux, DIALOG, tmp_path, OTHER), rt, OTHER)
    tool_calls.started(rt, OTHER, "toolu_write")
    with pytest.raises(key_gate.NoInputBox, match="not its input box"):
        dialog.check("/keys")


def test_tool_calls_that_keep_starting_refuse_the_keys_in_the_end(
    tmux, rt, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(key_gate, "TOOL_GRACE", 0.3)
    monkeypatch.setattr(key_gate, "GRACE_CAP", 0.6)
    keys = SessionKeys(tmux, draw(tmux, BOX, tmp_path), rt, CHANNEL)
    stop = threading.Event()

    def tools() -> None:
        number = 0
        while not stop.wait(0.05):
            number += 1
            tool_calls.started(rt, CHANNEL, f"toolu_{number}")  # each still running

    tool_calls.started(rt, CHANNEL, "toolu_0")
    threading.Thread(target=tools).start()
    try:
        with pytest.raises(KeysRefused, match="keeps starting tool calls"):
            keys.press("Escape")
    finally:
        stop.set()


def test_tool_call_records_are_private_never_followed_and_age_out(rt, tmp_path) -> None:
    tools = Path(rt.path("tools"))
    tool_calls.started(rt, CHANNEL, "toolu_a")
    tool_calls.started(rt, CHANNEL, "../../escape")  # not a usable id: a fixed name instead
    assert sorted(p.name for p in tools.iterdir()) == [f"{CHANNEL}.call", f"{CHANNEL}.toolu_a"]
    assert (tools / f"{CHANNEL}.toolu_a").stat().st_mode & 0o777 == 0o600
    latest = tool_calls.latest_start(rt, CHANNEL, 60)
    assert latest is not None and abs(latest - time.time()) < 5
    assert tool_calls.latest_start(rt, OTHER, 60) is None
    tool_calls.finished(rt, CHANNEL, "toolu_a")
    tool_calls.finished(rt, CHANNEL, "toolu_a")  # twice: no error
    # A call Claude Code interrupted never ends: past the grace its record goes.
    os.utime(tools / f"{CHANNEL}.call", (0, 0))
    assert tool_calls.latest_start(rt, CHANNEL, 60) is None
    assert list(tools.iterdir()) == []

    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    os.utime(elsewhere, (0, 0))
    (tools / f"{OTHER}.toolu_b").symlink_to(elsewhere)
    tool_calls.started(rt, OTHER, "toolu_b")  # no error, and the target is left alone
    assert elsewhere.stat().st_mtime == 0
    assert tool_calls.latest_start(rt, OTHER, 60) is None
    with pytest.raises(ValueError):
        tool_calls.started(rt, "../x", "toolu_c")
