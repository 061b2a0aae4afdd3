"""The bridge's statusLine command: remember what Claude Code reports, keep the terminal as it was.

Claude Code runs its ``statusLine`` command after API calls and now and then, with the session
described as JSON on stdin (model, context window, cost; see the reference, §11) and with the
pane's environment. The bridge's command (``hooks/status_line.py``) does two things:

* for a session the bridge serves, it caches model, context %, cost and any rate-limit usage
  in ``status/<session_id>.json`` in the runtime dir, for the Stop hook's reply footer;
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
from bridge.discord.render import footer
from bridge.state import runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~5 ms
if TYPE_CHECKING:
    from bridge.state.runtime import Runtime

SCRIPT = "status_line.py"
PREVIOUS_FLAG = "--previous"
SHELL = "/bin/sh"  # what Claude Code runs statusLine commands with (measured: dash on Debian)
_ABSENT = object()  # "there was no statusLine key", as opposed to a saved ``null``
_MAX_SESSION_ID = 128
_SESSION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


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
            sys.stdout.write(footer.summary(status_record(event)) + "\n")
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
    record = {
        "model_id": _str(model.get("id")),
        "model_name": _str(model.get("display_name")),
        "context_percent": _number(context.get("used_percentage")),
        "cost_usd": _number(cost.get("total_cost_usd")),
    }
    limits = {}  # only sent to Claude.ai subscribers: {"five_hour": {"used_percentage": …}}
    for window, usage in _dict(event.get("rate_limits")).items():
        used = _number(_dict(usage).get("used_percentage"))
        if used is not None and len(limits) < 8:
            limits[str(window)[:40]] = used
    if limits:
        record["rate_limits"] = limits
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
    path = status_path(context.runtime.ensure(), session_id)
    data = fastjson.dumps(status_record(event)).encode()
    try:
        if runtime.read_private(path, 1 << 16) == data:
            return path  # refreshed with nothing new: skip the write and its fsync
    except OSError:
        pass
    runtime.write_atomic(path, data)
    return path


def read_status(rt: Runtime, session_id: object) -> dict | None:
    """The cached record of ``session_id``, or None if there is none (or it is unreadable)."""
    if not is_safe_session_id(session_id):
        return None
    try:
        record = fastjson.loads(runtime.read_private(status_path(rt, session_id), 1 << 16))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def status_path(rt: Runtime, session_id: str) -> str:
    return os.path.join(rt.status, f"{session_id}.json")


def is_safe_session_id(session_id: object) -> bool:
    """Claude session ids are UUIDs; anything that is not a plain name never becomes a path."""
    return (
        isinstance(session_id, str)
        and 0 < len(session_id) <= _MAX_SESSION_ID
        and not session_id.startswith("-")
        and all(ch in _SESSION_ID_CHARS for ch in session_id)
    )


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


# --- settings.json, for `hooks install` / `hooks uninstall` ----------------------------------


def install(settings: dict, python: str | None = None) -> dict:
    """Point ``statusLine`` at the bridge's command, saving the user's own inside it.
    Reinstalling keeps the saved one (never saves the bridge's own command as "previous")."""
    current = settings.get("statusLine", _ABSENT)
    previous = saved_previous(current) if is_ours(current) else current
    # The user's other keys (padding, …) stay, so the terminal looks the same.
    entry = dict(previous) if isinstance(previous, dict) else {}
    entry.update(type="command", command=command(previous, python))
    settings["statusLine"] = entry
    return settings


def uninstall(settings: dict) -> dict:
    """Put back exactly the statusLine the bridge replaced (or remove the key if there was
    none). A statusLine that is not the bridge's is left alone."""
    current = settings.get("statusLine")
    if not is_ours(current):
        return settings
    previous = saved_previous(current)
    if previous is _ABSENT:
        del settings["statusLine"]
    else:
        settings["statusLine"] = previous
    return settings


def is_ours(entry: object) -> bool:
    from bridge.claude.settings import is_ours as is_our_command

    return is_our_command(entry)


def command(previous: object = _ABSENT, python: str | None = None) -> str:
    """The statusLine command line: this interpreter, ``-I -S``, the script, the saved
    previous statusLine as JSON (when there was one), and the bridge's marker comment."""
    import json
    import shlex

    import hooks as hooks_package
    from bridge.claude.settings import MARK

    script = os.path.join(os.path.dirname(os.path.abspath(hooks_package.__file__)), SCRIPT)
    argv = [python or sys.executable, "-I", "-S", script]
    if previous is not _ABSENT:
        argv += [PREVIOUS_FLAG, json.dumps(previous, ensure_ascii=False, separators=(",", ":"))]
    return f"{shlex.join(argv)} {MARK}"


def saved_previous(entry: dict) -> object:
    """The statusLine object saved in the bridge's command (``_ABSENT`` if none was)."""
    import json
    import shlex

    try:
        argv = shlex.split(entry["command"], comments=True)
        return json.loads(argv[argv.index(PREVIOUS_FLAG) + 1])
    except (ValueError, IndexError, KeyError, TypeError):
        return _ABSENT
