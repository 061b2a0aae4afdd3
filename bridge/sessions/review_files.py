"""What a review reads from the session's repository: a diff's files, one file's hunks, the
lines a comment is on, and, when the review is sent, those lines in the files as they are.

Every git call is one of ``bridge/sessions/changes.py``'s (its docstring says why they are
safe on a hostile repository): the trees compared are snapshots from the object store, the
files "as they are" a fresh snapshot of the working tree, and a file's lines are read with
``cat-file blob`` (no filter, no textconv). Blocking: the bot runs these in worker threads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bridge.sessions import changes, review_lines, tree_diff
from bridge.state.review_drafts import Comment

SNAPSHOT_BUDGET = 20.0  # seconds of git for the snapshot taken when a review is sent
STORED_LINES = 40  # lines of a comment's range kept in its draft (the prompt quotes 20)
STORED_WIDTH = 500  # characters kept per line (the prompt quotes 300)


class ReviewError(changes.GitError):
    """What was asked cannot be done on this diff (a file gone, binary, deleted); the message
    says why, for the owner."""


@dataclass(frozen=True)
class CommentNow:
    """A comment on the files as they are now, as Claude gets it: its lines now
    (``start``–``end``, ``lines`` their text), the comment, and what happened to them since it
    was written (``was``: the lines then, given when they changed or are gone)."""

    path: str
    start: int
    end: int
    lines: list[str]
    text: str
    moved_from: tuple[int, int] | None = None
    changed: bool = False
    removed: bool = False
    gone: bool = False  # the file itself
    was: list[str] | None = None
    was_start: int = 0


@dataclass(frozen=True)
class DiffFile:
    """File ``index`` of the diff between trees ``old`` and ``new`` (full ids)."""

    root: str
    old: str
    new: str
    change: tree_diff.FileChange


@dataclass(frozen=True)
class Located:
    """The lines a comment is on: ``start``–``end`` of ``path`` in snapshot ``tree``."""

    path: str
    tree: str
    start: int
    end: int
    quoted: list[str]


def changed_files(directory: str, old: str, new: str) -> list[tree_diff.FileChange]:
    """The files of the diff between two (abbreviated) trees, in the diff's order."""
    root, old_tree, new_tree = _trees(directory, old, new)
    return tree_diff.changed_files(root, old_tree, new_tree)


def diff_file(directory: str, old: str, new: str, index: int) -> DiffFile:
    """File ``index`` of the diff (as its select listed it); :class:`ReviewError` when the
    diff is gone or has no such file."""
    root, old_tree, new_tree = _trees(directory, old, new)
    files = tree_diff.changed_files(root, old_tree, new_tree)
    if not 0 <= index < len(files):
        raise ReviewError("That file is not in this diff.")
    return DiffFile(root, old_tree, new_tree, files[index])


def file_hunks(found: DiffFile) -> tuple[list[str], str]:
    """The file's hunks numbered by its new lines (``review_lines.numbered``), and why no
    comment can be made on it (empty when one can)."""
    path = found.change.path
    if found.change.binary:
        return [], f"{path} is binary: there are no lines to comment on."
    patch = tree_diff.file_patch(found.root, found.old, found.new, path)
    if "\n+++ /dev/null" in patch:
        return review_lines.numbered(patch), f"{path} was deleted in this diff: no lines are left."
    return review_lines.numbered(patch), ""


def locate(found: DiffFile, typed: str) -> Located:
    """The lines the owner typed (``12`` or ``12-18``) in the diff's new file, with their
    text; :class:`review_lines.BadLines` when they are not lines of it, :class:`ReviewError`
    when the file has no lines to comment on."""
    path = found.change.path
    if found.change.binary:
        raise ReviewError(f"{path} is binary: there are no lines to comment on.")
    data = tree_diff.file_in_tree(found.root, found.new, path)
    if data is None:
        raise ReviewError(f"{path} was deleted in this diff: no lines are left.")
    lines = text_lines(data)
    start, end = review_lines.parse_range(typed, len(lines), path)
    quoted = [line[:STORED_WIDTH] for line in lines[start - 1 : min(end, start - 1 + STORED_LINES)]]
    return Located(path, found.new, start, end, quoted)


def follow_comments(
    directory: str, comments: list[Comment], scratch: str, private: tuple[str, ...]
) -> list[CommentNow]:
    """Each comment on the files as they are now: a snapshot of the working tree, each
    comment's lines followed from its own snapshot to this one (moved by edits above them,
    or changed)."""
    deadline = time.monotonic() + SNAPSHOT_BUDGET
    root, now, _ = changes.snapshot(directory, scratch, deadline, private)
    files: dict[str, list[str] | None] = {}
    items = []
    for comment in comments:
        if comment.path not in files:
            data = tree_diff.file_in_tree(root, now, comment.path)
            files[comment.path] = None if data is None else text_lines(data)
        items.append(_follow(root, now, comment, files[comment.path]))
    return items


def _follow(root: str, now: str, comment: Comment, lines: list[str] | None) -> CommentNow:
    path, text, start, end, was = (
        comment.path,
        comment.text,
        comment.start,
        comment.end,
        comment.quoted,
    )
    if lines is None:
        return CommentNow(path, start, end, [], text, gone=True, was=was, was_start=start)
    if comment.tree == now:
        followed = review_lines.Followed(start, end, False)
    else:
        try:
            patch = tree_diff.file_patch(root, comment.tree, now, path, context=0)
            followed = review_lines.follow(review_lines.parse_hunks(patch), start, end)
        except changes.GitError:  # its snapshot is gone (gc): compare where the lines were
            here = lines[start - 1 : start - 1 + len(was)]
            followed = review_lines.Followed(start, end, here != was)
    if followed.removed or followed.start > len(lines):
        at = min(followed.start, len(lines) + 1)
        return CommentNow(path, at, at, [], text, removed=True, was=was, was_start=start)
    last = min(followed.end, len(lines))
    return CommentNow(
        path,
        followed.start,
        last,
        lines[followed.start - 1 : last],
        text,
        moved_from=(start, end),
        changed=followed.changed,
        was=was if followed.changed else None,
        was_start=start,
    )


def text_lines(data: bytes) -> list[str]:
    """A file's lines (a binary file has none to quote)."""
    if b"\0" in data[:8000]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _trees(directory: str, old: str, new: str) -> tuple[str, str, str]:
    root, _ = changes.repo_of(directory)
    try:
        return root, tree_diff.tree_of(root, old), tree_diff.tree_of(root, new)
    except changes.GitError as err:
        raise ReviewError(
            "This diff's snapshot is no longer in the repository (git removed it): open a "
            "new diff to comment on."
        ) from err
