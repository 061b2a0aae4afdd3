"""Two git trees compared: the files changed, their summary, the diff, one file's patch and bytes.

What ``/diff``, a turn's change summary (the Stop hook), a thread's finish and a review show of
the snapshots :mod:`bridge.sessions.changes` takes (or of any revision the owner names). Every
comparison reads the object store only (``git diff-tree``, ``cat-file``: no external diff, no
textconv, no submodule opened), through :func:`bridge.sessions.changes.git`, whose safe config
and environment apply. Its own module: reading what changed, apart from taking the snapshots.
"""

from __future__ import annotations

from bridge.sessions.changes import GitError, git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_REV_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/~^@{}-")


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


# --- comparing ----------------------------------------------------------------------------

# Two trees compared from the object store only: no external diff, no textconv, no submodule
# repository opened.
_DIFF_TREE = ("--no-renames", "--no-ext-diff", "--no-textconv", "--submodule=short")


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


def changed_files(root: str, old: str, new: str, deadline: float | None = None) -> list[FileChange]:
    """Per-file lines added/removed between two trees (a binary file: None, None)."""
    out = git(
        root,
        "diff-tree",
        "-r",
        "-z",
        "--numstat",
        *_DIFF_TREE,
        "--end-of-options",
        old,
        new,
        deadline=deadline,
    )
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
    out = git(
        root, "diff-tree", "-r", "-p", "--no-color", *_DIFF_TREE, "--end-of-options", old, new
    )
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


# --- one file, for a review (bridge/bot/changes/review.py) ----------------------------------------

MAX_BLOB = 16 << 20  # bytes: a larger file is not read for quoting


def file_patch(
    root: str, old: str, new: str, path: str, context: int = 3, max_bytes: int = 32 << 20
) -> str:
    """The unified diff of one file between two trees (``context`` lines around each change;
    0: the hunks alone, to map line numbers), cut at ``max_bytes``. ``path`` is literal
    (``GIT_LITERAL_PATHSPECS``); empty when the file did not change."""
    out = git(
        root,
        "diff-tree",
        "-r",
        "-p",
        "--no-color",
        f"-U{max(0, context)}",
        *_DIFF_TREE,
        "--end-of-options",
        old,
        new,
        "--",
        path,
    )
    return out[:max_bytes].decode(errors="replace")


def file_in_tree(root: str, tree: str, path: str, max_bytes: int = MAX_BLOB) -> bytes | None:
    """The bytes of ``path`` in ``tree`` as stored (``cat-file blob``: no filter, no
    textconv), or None when the tree holds no such file. :class:`GitError` when it is larger
    than ``max_bytes`` or git fails."""
    if not tree or not set(tree) <= set("0123456789abcdef"):
        raise GitError(f"not a tree id: {tree!r}")
    spec = f"{tree}:{path}"  # begins with the id: never read as an option
    try:
        size = int(git(root, "cat-file", "-s", spec).decode().strip() or "0")
    except (GitError, ValueError):
        return None  # not in that tree (deleted, or never there)
    if size > max_bytes:
        raise GitError(f"{path} is larger than {max_bytes >> 20} MiB")
    return git(root, "cat-file", "blob", spec)
