"""A session's changes: the diff of a turn or a thread (``diff``), line comments on it gathered
into one review prompt (``review``), a thread's worktree merged, pushed or discarded
(``finish``).
"""
