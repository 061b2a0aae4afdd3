"""The bridge's statusLine command: remember what Claude Code reports, keep the terminal as it was.

Claude Code runs its ``statusLine`` command after API calls and now and then, with the session
described as JSON on stdin (model, context window, cost) and with the
pane's environment. The bridge's command (``hooks/status_line.py``) does two things:

* for a session the bridge serves, it caches model, context %, cost and any rate-limit usage
  in ``status/<session_id>.json`` (``bridge.state.status_cache``), for the Stop hook's reply footer;
* it prints the status line: the output of the statusLine command the user had before the
  bridge installed its own (same stdin, stdout passed through untouched, same exit status), or
  else a compact line of its own.

``hooks install`` saves the user's previous ``statusLine`` object inside the bridge's command
line (``--previous '<json>'``), so the settings file alone says what to restore and
``hooks uninstall`` puts it back exactly. The command runs on every refresh, so its path
imports only ``os``, ``sys`` and small bridge modules (like the hooks: ``python -I -S``).
"""

from __future__ import annotations

import os
import sys

from bridge import fastjson
from bridge.claude.hook_table import PREVIOUS_FLAG
from bridge.state.status_cache import is_safe_session_id, read_status, write_status

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.state.runtime import Runtime

SHELL = "/bin/sh"  # what Claude Code runs statusLine commands with (measured: dash on Debian)


# --- the command, run by Claude Code ----------------------------------------------------------


def main(argv: list[str]) -> int:
    """Print the status line, then cache the session's figures. Returns the exit status."""
    event: dict = {}
    status = 0
    try:
        data = sys.stdin.buffer.read()
        event = _event(data)
        previous = previous_command(argv)
        if previous is not None:
            status = run_previous(previous, data)
        else:
            # Here: with the user's own statusLine, a refresh imports no render module (3 fewer).
            from bridge.discord.render.footer import summary

            sys.stdout.write(summary(status_record(event)) + "\n")
            sys.stdout.flush()
    except BaseException as err:  # the status line must never break Claude Code's screen
        _log(err)
    try:
        remember(event)
    except BaseException as err:
        _log(err)
    return status


def previous_command(argv: list[str]) -> str | None:
    """The shell command of the saved previous statusLine, if it has one to run."""
    if PREVIOUS_FLAG not in argv[:-1]:
        return None
    try:
        previous = fastjson.loads(argv[argv.index(PREVIOUS_FLAG) + 1])
    except ValueError:
        return None
    command = previous.get("command") if isinstance(previous, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def run_previous(command: str, data: bytes) -> int:
    """Run ``command`` as Claude Code would (``sh -c``, ``data`` on stdin); its stdout and
    stderr are ours, so its output reaches Claude Code byte for byte. Returns its status."""
    read_end, write_end = os.pipe()  # both close-on-exec; dup2 onto 0 clears it for the child
    try:
        pid = os.posix_spawn(
            SHELL,
            ["sh", "-c", command],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)],
            setsigdef=_ignored_by_python(),
        )
    finally:
        os.close(read_end)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
    except BrokenPipeError:
        pass  # the command did not read its input; that is its business
    finally:
        os.close(write_end)
    _, wait_status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(wait_status)
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def _ignored_by_python() -> tuple[int, ...]:
    """Python ignores SIGPIPE and SIGXFSZ; the child must get the defaults back (as
    ``subprocess`` does), or a command in a pipeline would not stop when its reader does."""
    import _signal  # the C module: ``signal`` would import enum (milliseconds)

    return tuple(
        getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
    )


def _event(data: bytes) -> dict:
    try:
        event = fastjson.loads(data or b"{}")
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def status_record(event: dict) -> dict:
    """What the footer needs from a statusLine input, type-checked (the input is not ours)."""
    model = _dict(event.get("model"))
    context = _dict(event.get("context_window"))
    cost = _dict(event.get("cost"))
    record: dict[str, object] = {
        "model_id": _str(model.get("id")),
        "model_name": _str(model.get("display_name")),
        "context_percent": _number(context.get("used_percentage")),
        "cost_usd": _number(cost.get("total_cost_usd")),
        "context_window_size": _number(context.get("context_window_size")),
    }
    # Only sent to Claude.ai subscribers:
    # {"five_hour": {"used_percentage": 23, "resets_at": <epoch seconds>}, "seven_day": …}
    limits: dict[str, float] = {}
    resets: dict[str, float] = {}
    for window, usage in _dict(event.get("rate_limits")).items():
        used = _number(_dict(usage).get("used_percentage"))
        if used is not None and len(limits) < 8:
            limits[str(window)[:40]] = used
            reset = _number(_dict(usage).get("resets_at"))
            if reset is not None and 0 < reset < 1e11:
                resets[str(window)[:40]] = reset
    if limits:
        record["rate_limits"] = limits
    if resets:
        record["rate_limit_resets"] = resets
    return record


def remember(event: dict, env: dict | None = None) -> str | None:
    """Cache the event's figures if the bridge serves its session; returns the file's path."""
    session_id = event.get("session_id")
    if not is_safe_session_id(session_id):
        return None
    from bridge.handlers.context import resolve

    context = resolve(event, env)
    if context is None:
        return None  # someone else's session: nothing to remember
    rt = context.runtime.ensure()
    record = status_record(event)
    before = (read_status(rt, session_id) or {}).get("cost_usd")
    path = write_status(rt, session_id, record)
    count_cost(rt, session_id, before, record.get("cost_usd"))
    return path


def count_cost(rt: Runtime, session_id: str, before: object, now: object) -> None:
    """Add the session's cost increase to today's total (``bridge.state.usage_totals``); a
    lower figure than before is a new Claude Code process: its whole cost is new."""
    now_usd, before_usd = _number(now), _number(before)
    if now_usd is None or now_usd <= 0 or now_usd == before:
        return
    from bridge.state import usage_totals

    increase = now_usd - before_usd if before_usd is not None and now_usd > before_usd else now_usd
    usage_totals.add(rt, session_id, increase)


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _log(err: BaseException) -> None:
    from bridge.handlers.context import log_error

    try:
        log_error(err)
    except BaseException:
        pass
