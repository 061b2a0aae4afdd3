"""What a turn changed: a snapshot when the prompt arrives, another at Stop, the difference.

UserPromptSubmit (:func:`at_prompt`) snapshots the session's git working tree
(``bridge/sessions/changes.py``) and keeps the tree id in ``turns/<channel>.json`` (runtime
dir); Stop (:func:`at_stop`) snapshots again and compares.

The snapshot at the prompt is taken *after* the hook has answered, in a process of its own
(``HookContext.defer``), so that the prompt goes to the model without waiting for git: in a
repository it was most of UserPromptSubmit's cost (two git processes and the ``subprocess``
import: 3.5× the CPU of ``python -c pass`` against 1.4× outside git, measured with
bench/hooks_fast_path.py). What it must capture is the working tree before the turn changes
it, and only a tool changes it: while it is taken, ``turns/<channel>.pending`` exists, and
the first PreToolUse of the turn (``events.on_tool_start``), the Stop and the next prompt
wait for it to go (:func:`wait_for_start`; one ``lstat`` when it is gone).

A record a Stop has not consumed (the turn was interrupted, or an API error ended it) is
kept by the next prompt, so its changes are counted with the next turn's rather than lost.
Runs only for a bridge session (the hooks reach here only then) and never fails the hook:
any git problem means "no summary" and a line in ``logs/hooks.log``.

The summary goes on the turn's status message (the bot shows it when the ``done`` progress
event carries it) or, for a turn too short to get one (or with progress off), on the reply.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.state import private_files, runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from bridge.handlers.context import HookContext

STATUS_AFTER = 2.0  # as bot/turn/progress.py: a turn shorter than this gets no status message
ABBREV = 20  # hex digits of each tree id in the Diff button's custom_id
PROMPT_BUDGET = 6.0  # seconds of git at UserPromptSubmit (its hook times out at 10 s)
STOP_BUDGET = 15.0  # seconds of git at Stop (the hook has 60 s; the reply comes first)


def record_path(rt: runtime.Runtime, channel_id: str) -> str:
    return os.path.join(rt.path("turns"), f"{channel_id}.json")


def cost_so_far(context: HookContext) -> float | None:
    """The session's cost as the statusLine last reported it (the turn's cost starts here)."""
    from bridge.state.status_cache import read_status

    cost = (read_status(context.runtime, context.event.get("session_id")) or {}).get("cost_usd")
    return cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def pending_path(rt: runtime.Runtime, channel_id: str) -> str:
    """Exists while the snapshot of a turn's start is being taken (``events.on_tool_start``
    spells it too, so as not to import this module on every tool call)."""
    return os.path.join(rt.path("turns"), f"{channel_id}.pending")


def at_prompt(context: HookContext) -> None:
    """Snapshot the working tree at the start of a turn, once the hook has answered (never
    raises)."""
    try:
        wait_for_start(context)  # the previous prompt's, if it is still being taken
        snapshot = _start_record(context, context.event.get("session_id"))
        if snapshot is not None:
            context.defer(snapshot)
    except Exception as err:  # no summary for this turn, never a failed hook
        _note(context, f"turn snapshot: {err}")


def wait_for_start(context: HookContext) -> None:
    """Return once no snapshot of a turn's start is being taken for this channel (at most
    its budget; a marker older than that is left by a process that died, and removed)."""
    path = pending_path(context.runtime, context.channel_id)
    deadline = time.monotonic() + PROMPT_BUDGET
    while True:
        try:
            since = os.lstat(path).st_mtime
        except FileNotFoundError:
            return
        if time.time() - since > PROMPT_BUDGET + 1 or time.monotonic() > deadline:
            _unlink(path)
            return
        time.sleep(0.005)


def bridge_paths(context: HookContext) -> tuple[str, ...]:
    """The bridge's own folders and config, never read into a snapshot (a repository at
    ``~`` holds them: the token would be copied into its object store)."""
    rt = context.runtime
    return (context.home, context.cfg.path, rt.root, rt.state_root)


def in_git_tree(path: str) -> bool:
    """Whether ``path`` or a parent holds a ``.git`` (a few ``stat`` calls): a session outside
    git costs its hooks no git process."""
    if not os.path.isabs(path):
        return False
    while True:
        if os.path.lexists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def _start_record(context: HookContext, session: object) -> Callable[[], None] | None:
    """Write the turn's record now when no git is needed; else mark the snapshot pending and
    return what takes it and writes the record."""
    rt = context.runtime
    path = record_path(rt, context.channel_id)
    old = private_files.read_json(path, 1 << 16) or {}
    record = {"session": session, "t": time.time()}
    if old.get("session") == session and old.get("tree") and old.get("root"):
        # an unfinished turn's: keep it
        record.update({k: old[k] for k in ("root", "tree", "index", "hash") if k in old})
    elif not in_git_tree(str(context.event.get("cwd") or "")):
        if old:  # outside git (known without running git): nothing to keep, nothing to write
            os.unlink(path)
        return None
    else:
        marker = pending_path(rt.ensure(), context.channel_id)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))

        def snapshot() -> None:
            try:
                _snapshot_into(context, record, str(context.event.get("cwd")))
                private_files.write_atomic(path, fastjson.dumps(record).encode())
            except Exception as err:
                _note(context, f"turn snapshot: {err}")
            finally:
                _unlink(marker)

        return snapshot
    private_files.write_atomic(path, fastjson.dumps(record).encode())  # (its folder exists)
    return None


def _snapshot_into(context: HookContext, record: dict, cwd: str) -> None:
    """The git snapshot of the working tree at ``cwd`` into ``record`` (or why there is none)."""
    from bridge.sessions import changes  # subprocess: only for a repository

    rt = context.runtime
    try:
        deadline = time.monotonic() + PROMPT_BUDGET
        repo = changes.locate(cwd, deadline)
        tree, _ = changes.snapshot_at(repo, rt.path("turns"), deadline, bridge_paths(context))
        # where the repository is, so that Stop need not ask git again
        record.update(root=repo.root, tree=tree, index=repo.index, hash=len(repo.zero))
    except changes.NotARepository:
        record["why"] = "not a git repository"
    except changes.GitError as err:
        record["why"] = str(err)[:200]


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def at_stop(context: HookContext, on_reply: bool | None = None) -> dict | None:
    """Snapshot again and compare with the turn's start; the record is consumed. Returns what
    the ``done`` event and the reply need (None: no record, no repository, nothing changed);
    ``on_reply``: the turn was too short for a status message (or progress is off)."""
    try:
        return _compare(context, on_reply)
    except Exception as err:
        _note(context, f"turn changes: {err}")
        return None


class PendingChanges:
    """The Stop hook's comparison, running in a thread. ``on_reply`` is known at once (from
    the turn's length and the progress setting, no git): only then does the reply wait for
    the result; otherwise it is posted first and the result goes to the status message."""

    def __init__(
        self,
        on_reply: bool = False,
        worker: threading.Thread | None = None,
        found: list | None = None,
    ) -> None:
        self.on_reply = on_reply
        self._worker = worker
        self._found = found if found is not None else []

    def __call__(self) -> dict | None:
        if self._worker is not None:
            self._worker.join(STOP_BUDGET)
        return self._found[0] if self._found else None


def compare_in_background(context: HookContext) -> PendingChanges:
    """Start :func:`at_stop` in a thread while the Stop hook lays out and posts the reply."""
    wait_for_start(context)  # a turn with no tool call: its start snapshot may still be going
    start = private_files.read_json(record_path(context.runtime, context.channel_id), 1 << 16) or {}
    if not start.get("tree"):
        return PendingChanges()  # no snapshot of this turn's start (outside git): nothing to do
    took = time.time() - float(start.get("t") or 0)
    on_reply = not context.project.progress or took < STATUS_AFTER
    import threading

    found: list[dict | None] = []
    worker = threading.Thread(target=lambda: found.append(at_stop(context, on_reply)), daemon=True)
    try:
        worker.start()
    except RuntimeError as err:  # no thread to be had: no summary, the reply still goes
        _note(context, f"turn changes: {err}")
        return PendingChanges()
    return PendingChanges(on_reply, worker, found)


def _compare(context: HookContext, on_reply: bool | None) -> dict | None:
    from bridge.sessions import changes, tree_diff

    rt = context.runtime
    path = record_path(rt, context.channel_id)
    start = private_files.read_json(path, 1 << 16)
    if not start or start.get("session") != context.event.get("session_id"):
        return None
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None  # another Stop of this session took it
    root, old = start.get("root"), start.get("tree")
    if not isinstance(root, str) or not isinstance(old, str):
        return None  # outside git: nothing to say unless asked (/diff says why)
    deadline = time.monotonic() + STOP_BUDGET - 1
    index, size = start.get("index"), start.get("hash")
    if isinstance(index, str) and size in (40, 64):
        repo = changes.Repository(root, index, b"0" * size)
    else:
        repo = changes.locate(root, deadline)
    new, skipped = changes.snapshot_at(repo, rt.path("turns"), deadline, bridge_paths(context))
    files = tree_diff.changed_files(root, old, new, deadline)
    if not files:
        return None
    if on_reply is None:
        took = time.time() - float(start.get("t") or 0)
        on_reply = not context.project.progress or took < STATUS_AFTER
    return {
        "summary": tree_diff.summary(files),
        "files": len(files),
        "old": old,
        "new": new,
        "skipped": len(skipped),
        "on_reply": on_reply,
    }


def diff_button(key: str, found: dict) -> dict:
    """The action row with the **Diff** button for a turn's changes (Discord JSON)."""
    from bridge.discord import custom_ids

    custom = custom_ids.diff(key, found["old"][:ABBREV], found["new"][:ABBREV])
    button = {"type": 2, "style": 2, "label": "Diff", "emoji": {"name": "📝"}, "custom_id": custom}
    return {"type": 1, "components": [button]}


def _note(context: HookContext, line: str) -> None:
    from bridge.handlers.context import note

    note(context.runtime, line)
