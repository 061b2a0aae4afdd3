"""A process's children and descendants, from ``/proc`` (Linux): where a pane's CLI runs
below its shell. Unreadable entries (a process gone meanwhile, no ``/proc``) read as none."""

from __future__ import annotations

from collections.abc import Callable


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(child) for child in handle.read().split()]
    except (OSError, ValueError):
        return []


def first_in(pid: int, is_it: Callable[[int], bool], max_depth: int, depth: int = 0) -> int | None:
    """``pid`` if ``is_it``, else the first such process among its descendants, searched
    ``max_depth`` levels down."""
    if is_it(pid):
        return pid
    if depth >= max_depth:
        return None
    for child in children(pid):
        found = first_in(child, is_it, max_depth, depth + 1)
        if found is not None:
            return found
    return None


def descendants(pid: int, max_depth: int, depth: int = 0) -> list[int]:
    if depth >= max_depth:
        return []
    found = []
    for child in children(pid):
        found += [child, *descendants(child, max_depth, depth + 1)]
    return found
