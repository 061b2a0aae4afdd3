"""What a turn changed in a session's git repository: snapshots, change summaries, diffs.

A snapshot is the tree of the whole working tree (tracked files as they are on disk, deleted
ones gone, untracked files that git does not ignore included), written into the repository's
object store through a *temporary* index: a copy of the real index (so unchanged files are not
hashed again), ``git add -A`` into it, ``git write-tree``. The user's index, ``HEAD``, refs and
files are never touched; the snapshot is only an object id. Comparing two snapshots
(``git diff-tree``) gives what happened in between: the UserPromptSubmit hook takes one at the
start of a turn, the Stop hook another at its end (``bridge/handlers/turn_changes.py``).

The repository is not ours and may be hostile (Claude can write ``.git/config``): every git
call gets a fixed environment (no ``GIT_*`` from the caller, no terminal prompt, no pager, no
optional locks), hooks off (``core.hooksPath=/dev/null``), no fsmonitor, every filter driver
the config names neutralised (a ``clean`` filter is a command ``git add`` would run), and
diffs use ``--no-ext-diff --no-textconv``; each call has a timeout. Untracked files larger
than :data:`MAX_UNTRACKED_FILE` or beyond :data:`MAX_UNTRACKED` of them are left out of a
snapshot (hashing a stray multi-gigabyte file would stall the turn), and named as skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

TIMEOUT = 10.0  # seconds per git command
MAX_UNTRACKED_FILE = 8 << 20  # bytes: larger untracked files are not snapshotted
MAX_UNTRACKED = 5000  # untracked files beyond this are not snapshotted
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "diff.external=",
    "color.ui=false",
    "advice.addIgnoredFile=false",
)
_FILTER_KEYS = ("clean", "smudge", "process")
_REV_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/~^@{}-")


class GitError(RuntimeError):
    """git failed, timed out or is missing; the message says which and why."""


class NotARepository(GitError):
    """The directory is not inside a git working tree."""


class FileChange:
    """One file of a diff: its path, lines added and removed (None for a binary file)."""

    __slots__ = ("added", "path", "removed")

    def __init__(self, path: str, added: int | None, removed: int | None) -> None:
        self.path, self.added, self.removed = path, added, removed

    @property
    def binary(self) -> bool:
        return self.added is None

    def __repr__(self) -> str:
        return f"FileChange({self.path!r}, {self.added}, {self.removed})"


# --- running git ------------------------------------------------------------------------


def git_env(index_file: str | None = None) -> dict[str, str]:
    """The environment of every git call: nothing of the caller's ``GIT_*``, never a prompt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("SSH_ASKPASS", None)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_LITERAL_PATHSPECS="1",
               GIT_PAGER="cat", PAGER="cat", LC_ALL="C")  # fmt: skip
    if index_file:
        env["GIT_INDEX_FILE"] = index_file
    return env


def git(
    cwd: str,
    *args: str,
    index_file: str | None = None,
    filters: tuple[str, ...] = (),
    stdin: bytes | None = None,
    timeout: float = TIMEOUT,
    deadline: float | None = None,
) -> bytes:
    """Run ``git -C cwd <safe config> args`` and return its stdout; :class:`GitError` if it
    fails, times out or is missing. ``filters``: filter drivers to neutralise; ``deadline``
    (``time.monotonic()``): no command runs past it."""
    if deadline is not None:
        import time

        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise GitError(f"git {args[0]}: no time left")
    argv = ["git", "--no-pager", "-C", cwd]
    for setting in _SAFE_CONFIG:
        argv += ["-c", setting]
    for name in filters:
        argv += ["-c", f"filter.{name}.required=false"]
        for key in _FILTER_KEYS:
            argv += ["-c", f"filter.{name}.{key}="]
    argv += list(args)
    try:
        done = subprocess.run(
            argv, input=stdin, capture_output=True, env=git_env(index_file), timeout=timeout,
            stdin=None if stdin is not None else subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as err:
        raise GitError(f"git {args[0]} took more than {timeout:.0f} s") from err
    except OSError as err:
        raise GitError(f"git {args[0]}: {err}") from err
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        if done.returncode == 128 and message and "not a git repository" in message[0]:
            raise NotARepository("not in a git repository")
        raise GitError(f"git {args[0]}: {message[-1] if message else done.returncode}")
    return done.stdout


def filter_drivers(root: str, deadline: float | None = None) -> tuple[str, ...]:
    """Names of the filter drivers the repository's config defines (any scope)."""
    try:
        out = git(root, "config", "-z", "--name-only", "--get-regexp", r"^filter\.",
                  deadline=deadline)  # fmt: skip
    except GitError:
        return ()  # none (git exits 1 when nothing matches)
    names = set()
    for key in out.decode(errors="replace").split("\0"):
        head, _, _ = key.rpartition(".")
        if head.startswith("filter.") and len(head) > 7:
            names.add(head[7:])
    return tuple(sorted(names))


# --- snapshots --------------------------------------------------------------------------


def repo_of(path: str, deadline: float | None = None) -> tuple[str, str]:
    """The top of the working tree holding ``path`` and the path of its index file.
    :class:`NotARepository` when there is none (or ``path`` is inside ``.git``)."""
    if not os.path.isdir(path):
        raise NotARepository(f"{path} is not a directory")
    try:
        out = git(path, "rev-parse", "--show-toplevel", "--git-path", "index", deadline=deadline)
    except GitError as err:
        if "work tree" in str(err):  # inside .git, or a bare repository
            raise NotARepository("not in a git working tree") from err
        raise
    lines = out.decode(errors="surrogateescape").splitlines()
    if len(lines) != 2 or not lines[0]:
        raise NotARepository("not in a git working tree")
    root, index = lines
    return root, index if os.path.isabs(index) else os.path.join(path, index)


def snapshot(
    path: str,
    scratch: str,
    filters: tuple[str, ...] | None = None,
    deadline: float | None = None,
) -> tuple[str, str, list[str]]:
    """Snapshot the working tree holding ``path``: ``(root, tree id, skipped untracked files)``.

    ``scratch`` is a private directory for the temporary index (removed afterwards);
    ``filters``: the repository's filter drivers, when the caller already asked; ``deadline``
    (``time.monotonic()``): give up (:class:`GitError`) rather than run past it.
    """
    root, index = repo_of(path, deadline)
    filters = filter_drivers(root, deadline) if filters is None else filters
    fd, tmp_index = tempfile.mkstemp(prefix="index-", dir=scratch)
    os.close(fd)
    try:
        try:
            shutil.copyfile(index, tmp_index)
        except OSError:
            os.unlink(tmp_index)  # no index yet (a fresh repository): git starts an empty one
        skipped = _add_all(root, tmp_index, filters, deadline)
        tree = git(root, "write-tree", index_file=tmp_index, filters=filters,
                   deadline=deadline).decode().strip()  # fmt: skip
    finally:
        for name in (tmp_index, tmp_index + ".lock"):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
    return root, tree, skipped


def _add_all(root: str, index: str, filters: tuple[str, ...], deadline: float | None) -> list[str]:
    """``git add -A`` into ``index``, leaving out untracked files too large or too many."""
    listed = git(root, "ls-files", "-z", "--others", "--exclude-standard", index_file=index,
                 filters=filters, deadline=deadline)  # fmt: skip
    untracked = [p for p in listed.decode(errors="surrogateescape").split("\0") if p]
    # A directory listed with its slash is a repository of its own (a worktree under
    # .claude/worktrees, a clone): not this tree's content, left out without a word.
    nested = {p for p in untracked if p.endswith("/")}
    untracked = [p for p in untracked if p not in nested]
    skipped = untracked[MAX_UNTRACKED:]
    for rel in untracked[:MAX_UNTRACKED]:
        try:
            if os.lstat(os.path.join(root, rel)).st_size > MAX_UNTRACKED_FILE:
                skipped.append(rel)
        except OSError:
            pass
    if not skipped and not nested:
        git(root, "add", "-A", index_file=index, filters=filters, deadline=deadline)
        return []
    git(root, "add", "-u", index_file=index, filters=filters, deadline=deadline)
    wanted = set(untracked) - set(skipped)
    if wanted:
        spec = b"".join(os.fsencode(p) + b"\0" for p in sorted(wanted))
        git(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", index_file=index,
            filters=filters, stdin=spec, deadline=deadline)  # fmt: skip
    return sorted(skipped)


# --- comparing ----------------------------------------------------------------------------


def tree_of(root: str, rev: str) -> str:
    """The full tree id of a revision or (abbreviated) tree id; :class:`GitError` if unknown."""
    if not rev or rev.startswith("-") or not set(rev) <= _REV_CHARS or ".." in rev:
        raise GitError(f"not a revision: {rev!r}")
    out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{tree}")
    # (rev-parse reads objects and refs only: no filter, hook or pager can run)
    return out.decode().strip()


def head_tree(root: str) -> str:
    """``HEAD``'s tree, or the empty tree in a repository without commits."""
    try:
        return tree_of(root, "HEAD")
    except GitError:
        return EMPTY_TREE


def changed_files(
    root: str,
    old: str,
    new: str,
    filters: tuple[str, ...] | None = None,
    deadline: float | None = None,
) -> list[FileChange]:
    """Per-file lines added/removed between two trees (a binary file: None, None)."""
    filters = filter_drivers(root, deadline) if filters is None else filters
    out = git(root, "diff-tree", "-r", "-z", "--numstat", "--no-renames", "--no-ext-diff",
              "--no-textconv", old, new, filters=filters, deadline=deadline)  # fmt: skip
    fields = out.decode(errors="replace").split("\0")
    changes = []
    for field in fields:
        if not field:
            continue
        added, _, rest = field.partition("\t")
        removed, _, path = rest.partition("\t")
        if added == "-":
            changes.append(FileChange(path, None, None))
        elif added.isdigit() and removed.isdigit():
            changes.append(FileChange(path, int(added), int(removed)))
    return changes


def diff_text(root: str, old: str, new: str, max_bytes: int = 32 << 20) -> tuple[str, bool]:
    """The unified diff between two trees (binary files named, not dumped), and whether it
    was cut at ``max_bytes``."""
    out = git(root, "diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-textconv",
              "--no-color", old, new, filters=filter_drivers(root))  # fmt: skip
    cut = len(out) > max_bytes
    return out[:max_bytes].decode(errors="replace"), cut


def summary(changes: list[FileChange]) -> str:
    """``📝 3 files changed, +20 −4`` (empty when nothing changed)."""
    if not changes:
        return ""
    added = sum(c.added or 0 for c in changes)
    removed = sum(c.removed or 0 for c in changes)
    files = f"{len(changes)} file{'s' if len(changes) != 1 else ''} changed"
    return f"📝 {files}, +{added} −{removed}"
