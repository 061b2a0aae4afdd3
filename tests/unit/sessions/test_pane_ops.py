"""The pane controls the slash commands use, against a real tmux pane on a private socket
(a plain ``cat -v``: what reaches the pane is echoed back as visible text)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.sessions import pane_ops
from bridge.sessions.key_gate import SessionKeys
from bridge.sessions.pane_input import NoInputBox
from bridge.state import runtime
from bridge.tmux import TmuxSessions

CHANNEL = "100000000000000009"


@pytest.fixture
def pane(tmp_path) -> Iterator[tuple[TmuxSessions, str]]:
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)
    info = tmux.start(CHANNEL, "ops", str(tmp_path), ["cat", "-v"], {})
    yield tmux, info.pane_id
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def keys(tmux: TmuxSessions, pane_id: str, tmp_path: Path) -> SessionKeys:
    """The pane as the bot presses keys into it: through the key gate, nothing open."""
    return SessionKeys(tmux, pane_id, runtime.Runtime(str(tmp_path / "rt")).ensure(), CHANNEL)


def test_send_keys_presses_key_names_and_types_other_words_as_text(pane, tmp_path) -> None:
    tmux, pane_id = pane
    sent = pane_ops.send_keys(keys(tmux, pane_id, tmp_path), "ab ESC c\x1b[2Jd Enter")
    assert sent == ["'ab'", "Escape", "'cd'", "Enter"]  # the escape sequence never reaches it
    screen = tmux.wait_for(pane_id, lambda s: s.count("ab^[cd") == 2, 5.0)
    assert "[2J" not in screen  # echoed by the terminal, then printed by cat -v


def test_peek_collapses_blank_runs_and_counts_lines_that_say_something(pane, tmp_path) -> None:
    tmux, pane_id = pane
    pane_ops.send_keys(keys(tmux, pane_id, tmp_path), "one Enter Enter Enter Enter two Enter")
    tmux.wait_for(pane_id, lambda s: s.count("two") == 2, 5.0)
    assert pane_ops.peek(tmux, pane_id) == "one\none\n\ntwo\ntwo"
    assert pane_ops.peek(tmux, pane_id, 2) == "two\ntwo"


BOX = ("────", "❯ ", "────", "  ⏸ plan mode on")  # Claude Code's input box and footer
DIALOG = ("Do you want to create x.txt?", "❯ 1. Yes", "  2. Yes, allow all edits", "  3. No")


def draw(tmux: TmuxSessions, lines: tuple[str, ...], tmp_path) -> str:
    """A second pane that draws ``lines`` like Claude Code's screen, then echoes every key
    it gets (``cat -v``: Escape shows as ``^[``, Shift+Tab as ``^[[Z``)."""
    drawing = "printf '%s\\n' " + " ".join(f"'{line}'" for line in lines) + "; exec cat -v"
    pane = tmux.start("100000000000000008", "ui", str(tmp_path), ["sh", "-c", drawing], {})
    tmux.wait_for(pane.pane_id, lambda screen: lines[-1].strip() in screen, 5.0)
    return pane.pane_id


def keys_seen(tmux: TmuxSessions, pane_id: str, lines: tuple[str, ...]) -> str:
    """What reached the pane after its drawing: a marker typed last shows everything did."""
    tmux.type_literal(pane_id, "END")
    screen = tmux.wait_for(pane_id, lambda s: "END" in s, 5.0)
    return screen.split(lines[-1])[-1].strip()


def test_interrupt_presses_escape_only_while_the_input_box_shows(pane, tmp_path) -> None:
    tmux, _ = pane
    box = draw(tmux, BOX, tmp_path)
    pane_ops.interrupt(keys(tmux, box, tmp_path))
    assert keys_seen(tmux, box, BOX) == "^[END"  # Escape; the empty box needs no C-e C-u


@pytest.mark.parametrize("lines", [DIALOG, ()], ids=["dialog", "plain pane"])
def test_no_key_is_pressed_into_a_dialog_or_a_screen_without_input_box(
    pane, tmp_path, lines
) -> None:
    """In Claude Code's Write dialog Shift+Tab picks "Yes, allow all edits" and Escape picks
    "No": interrupt, cycle_mode and switch_model refuse and press nothing."""
    tmux, pane_id = pane
    target = draw(tmux, lines, tmp_path) if lines else pane_id
    gated = keys(tmux, target, tmp_path)
    for action, what in (
        (lambda: pane_ops.interrupt(gated), "Escape"),
        (lambda: pane_ops.cycle_mode(gated, "default"), "Shift+Tab"),
        (lambda: pane_ops.switch_model(gated, "opus"), "/model"),
    ):
        with pytest.raises(NoInputBox, match="dialog") as refused:
            action()
        assert what in str(refused.value)
    if lines:
        assert keys_seen(tmux, target, lines) == "END"
    else:
        tmux.type_literal(target, "END")
        assert tmux.wait_for(target, lambda s: "END" in s, 5.0).strip() == "END"


def test_cycle_mode_reads_the_mode_off_the_footer_without_a_key(pane, tmp_path) -> None:
    tmux, _ = pane
    box = draw(tmux, BOX, tmp_path)
    assert pane_ops.cycle_mode(keys(tmux, box, tmp_path), "plan") == "plan"
    assert keys_seen(tmux, box, BOX) == "END"


def test_only_the_switch_model_dialog_itself_is_confirmed() -> None:
    dialog = "\n".join(
        [
            "● earlier the model said: Switch model? 1. Yes, switch to x",
            "▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔ ctrl+y to paste deleted text ▔",
            "  Switch model?",
            "  ❯ 1. Yes, switch to claude-test-model",
            "    2. No, go back",
        ]
    )
    assert pane_ops.asks_switch(dialog)
    permission = "\n".join(
        [
            "● earlier the model said: Switch model? 1. Yes, switch to x",
            "▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔",
            " Do you want to create x.txt?",
            " ❯ 1. Yes",
        ]
    )
    assert not pane_ops.asks_switch(permission)
    assert not pane_ops.asks_switch("Switch model?\n1. Yes, switch to x\n" + "\n".join(BOX))


def test_glance_reads_no_mode_and_not_busy_off_a_plain_pane(pane) -> None:
    tmux, pane_id = pane
    assert pane_ops.glance(tmux, pane_id) == pane_ops.Glance(busy=False, mode=None)
