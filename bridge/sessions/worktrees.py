"""Git worktrees for threads with ``isolation: "worktree"``: create, inspect, remove.

The bridge creates the worktree itself (``git worktree add``) at
``<repo>/.claude/worktrees/<name>`` on branch ``worktree-<name>`` — the place Claude Code's own
``-w`` uses — named after the thread (``fix-login-bug``, ``fix-login-bug-2`` when that name is
taken; a thread of an older bridge keeps its ``<name>-<thread id>``), so it always knows the
path and the base commit without polling. That folder is hidden from the project's ``git
status`` by one line in the repository's ``info/exclude`` (``hide_worktrees``).

Removal never loses work silently: :func:`inspect` lists uncommitted
changes, ignored files (``.env``, local databases: ``git worktree remove`` deletes them without
a word) and commits that no other branch holds, and only a clean worktree is removed without
``force``. Every git call is an argv list (no shell); names are reduced to ``[a-z0-9-]``.

What a worktree holds is read as a snapshot is (``changes.py``): no repository-defined command
runs to tell (``git status`` would run its fsmonitor, and its ``clean`` filters on files
modified in the second the index was written; ``git log`` its ``gpg.program`` under
``log.showSignature``; ``git worktree remove`` runs ``git status``). Every call here has the
snapshots' fixed settings (no hook, no fsmonitor, no pager, no network). ``git worktree add``
makes the worktree without its files (``--no-checkout``), which are then checked out sealed as
a merge's are (``sealed_git.py``: ``read-tree -u`` under a git dir of the bridge's), so no
smudge filter of the repository runs (a filter named in ``info/attributes`` and defined in
``.git/config``, both files Claude can write); a tree with files git would convert (a
``filter`` such as Git LFS, a ``working-tree-encoding``) is refused: make that worktree at the
terminal.
"""

from __future__ import annotations

import logging
import os
import shlex
import stat
import tempfile
from dataclasses import dataclass, field

from bridge.sessions import changes, tree_diff
from bridge.sessions.sealed_git import Sealed, converted, last_line

log = logging.getLogger(__name__)

WORKTREES_DIR = os.path.join(".claude", "worktrees")
BRANCH_PREFIX = "worktree-"
SLUG_MAX = 32
SUFFIX_MAX = 99  # fix-login-bug, fix-login-bug-2 … fix-login-bug-99
GIT_TIMEOUT = 30
# The line hide_worktrees keeps in the repository's info/exclude: a worktree folder (a checkout
# with a .git file) is otherwise `?? .claude/` in the project's `git status`.
EXCLUDE_LINE = "/.claude/worktrees/"
EXCLUDE_READ_MAX = 1 << 20


class WorktreeError(RuntimeError):
    """git refused, or the directory is not in a git repository."""


@dataclass
class Loss:
    """What removing a worktree would lose."""

    exists: bool = True
    uncommitted: list[str] = field(default_factory=list)  # `git status --porcelain`-like lines
    unmerged: list[str] = field(default_factory=list)  # `<sha> <subject>` of commits
    ignored: list[str] = field(default_factory=list)  # paths git ignores (a directory ends in /)

    @property
    def clean(self) -> bool:
        return not self.uncommitted and not self.unmerged and not self.ignored


def slug(thread_name: str) -> str:
    """The thread's name reduced to ``[a-z0-9-]`` (at most ``SLUG_MAX``), else ``""``: safe as
    a folder name and, after ``worktree-``, as a branch name (no ``..``, ``~^:``, space, dot
    or leading dash can be left)."""
    reduced = "".join(c if c.isascii() and c.isalnum() else "-" for c in thread_name.lower())
    return "-".join(part for part in reduced.split("-") if part)[:SLUG_MAX].strip("-")


def worktree_name(thread_name: str, thread_id: str) -> str:
    """``<slug of the name>-<thread id>``: the name an older bridge gave a thread's worktree,
    looked for so such a thread keeps its branch."""
    if not (thread_id.isascii() and thread_id.isdigit()):
        raise ValueError(f"not a thread id: {thread_id!r}")
    name = slug(thread_name)
    return f"{name}-{thread_id}" if name else f"thread-{thread_id}"


def add_for_thread(project_path: str, thread_name: str, thread_id: str) -> dict:
    """A new worktree for a thread that has none recorded, named after the thread: the first
    of ``<slug>``, ``<slug>-2``, … whose folder and branch are both free (another thread's are
    never reused). A worktree or branch an older bridge named for this thread is taken up."""
    legacy = worktree_name(thread_name, thread_id)
    repo = repo_root(project_path)
    if repo is not None and _taken(repo, legacy):
        return add(project_path, legacy)
    base = slug(thread_name) or "thread"
    for number in range(1, SUFFIX_MAX + 1):
        name = base if number == 1 else f"{base[: SLUG_MAX - 3].rstrip('-')}-{number}"
        if repo is not None and _taken(repo, name):
            continue
        try:
            return add(project_path, name, reuse=False)
        except WorktreeError:
            # Made meanwhile by another thread's start (git's ref lock lets one win): next.
            if repo is None or not _taken(repo, name):
                raise
    raise WorktreeError(f"no free worktree name for {base!r} (up to {base}-{SUFFIX_MAX})")


def _taken(repo: str, name: str) -> bool:
    """A folder or a branch of the worktree name ``name`` exists (a registered worktree
    whose folder is gone keeps its branch)."""
    path = os.path.join(repo, WORKTREES_DIR, name)
    return os.path.lexists(path) or bool(_git(repo, "branch", "--list", BRANCH_PREFIX + name))


def repo_root(path: str) -> str | None:
    """The top directory of the git repository holding ``path``, or None."""
    try:
        out = _git(path, "rev-parse", "--show-toplevel")
    except WorktreeError:
        return None
    return out.strip() or None


def add(project_path: str, name: str, reuse: bool = True) -> dict:
    """Create (or, ``reuse``, take up) the worktree ``name`` of the repository at
    ``project_path``; without ``reuse`` an existing one of that name is refused.

    Returns what the bridge records: ``{"name", "path", "branch", "base", "repo"}``; ``base``
    is the commit the branch started from.
    """
    if os.sep in name or name in ("", ".", "..") or not name.isascii():
        raise ValueError(f"unsafe worktree name: {name!r}")
    repo = repo_root(project_path)
    if repo is None:
        raise WorktreeError(
            f"{project_path} is not in a git repository; worktree isolation needs one"
        )
    path = os.path.join(repo, WORKTREES_DIR, name)
    branch = BRANCH_PREFIX + name
    hide_worktrees(repo)
    if not reuse and _taken(repo, name):
        raise WorktreeError(f"a worktree or branch named {name!r} exists")
    if os.path.isdir(path) and _is_worktree(repo, path):
        base = _git(repo, "merge-base", "HEAD", branch).strip()
    elif _git(repo, "branch", "--list", branch).strip():  # its directory was removed
        _git(repo, "worktree", "prune")
        base = _git(repo, "merge-base", "HEAD", branch).strip()
        _add_sealed(repo, path, branch, new_branch=False)
    else:
        base = _git(repo, "rev-parse", "HEAD").strip()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _add_sealed(repo, path, branch, new_branch=True, start=base)
    return {"name": name, "path": path, "branch": branch, "base": base, "repo": repo}


def hide_worktrees(repo: str) -> None:
    """Keep ``EXCLUDE_LINE`` in the repository's ``info/exclude`` (the common git dir's, which
    its worktrees share). The file is the repository's: the line is appended only when
    missing, nothing else in it is touched, and neither ``info`` nor the file is followed
    if it is a symlink (nor written unless a regular file). A refusal is logged, not raised:
    the worktree works all the same."""
    try:
        common = _git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
        _append_line(common, EXCLUDE_LINE)
    except (OSError, WorktreeError) as err:
        log.warning("could not hide %s from git status in %s: %s", EXCLUDE_LINE, repo, err)


def _append_line(git_dir: str, line: str) -> None:
    """``line`` at the end of ``<git_dir>/info/exclude`` unless one of its lines is it."""
    nofollow = os.O_NOFOLLOW | os.O_CLOEXEC
    top = os.open(git_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            os.mkdir("info", 0o755, dir_fd=top)
        except FileExistsError:
            pass
        info = os.open("info", os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=top)
    finally:
        os.close(top)
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | nofollow
        fd = os.open("exclude", flags, 0o644, dir_fd=info)
    finally:
        os.close(info)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{git_dir}/info/exclude is not a regular file")
        content = os.read(fd, EXCLUDE_READ_MAX)
        if line.encode() in (raw.strip() for raw in content.splitlines()):
            return
        gap = b"\n" if content and not content.endswith(b"\n") else b""
        os.write(fd, gap + f"# discord-bridge's thread worktrees\n{line}\n".encode())
    finally:
        os.close(fd)


def _add_sealed(repo: str, path: str, branch: str, new_branch: bool, start: str = "") -> None:
    """``git worktree add --no-checkout`` (of ``branch``, made at ``start`` if new), then its
    files checked out sealed; refused before anything is made when a file of the tree would be
    converted. A checkout that fails takes the worktree (and a new branch) away again."""
    tree = _git(
        repo,
        "rev-parse",
        "--verify",
        "--end-of-options",
        f"{start or 'refs/heads/' + branch}^{{tree}}",
    ).strip()
    files = [p for p in _git(repo, "ls-tree", "-r", "-z", "--name-only", tree).split("\0") if p]
    with tempfile.TemporaryDirectory(prefix="discord-bridge-") as scratch:  # 0700
        try:
            with Sealed(repo, scratch) as sealed:
                made = ["-b", branch, "--", path, start] if new_branch else ["--", path, branch]
                found = converted(sealed, tree, files)
                if found:
                    first = found[0].replace("`", "ˋ")
                    raise WorktreeError(
                        f"{len(found)} file(s) of the project (`{first}`…) have a `filter` or "
                        "`working-tree-encoding` attribute (Git LFS?): the bridge runs no "
                        "repository's filter; make this worktree at the terminal, then send "
                        f"again: `{shlex.join(['git', 'worktree', 'add', *made])}`"
                    )
                _git(repo, "worktree", "add", "--no-checkout", *made)
                try:
                    _check_out(sealed, path, tree)
                except (WorktreeError, changes.GitError) as err:
                    _git(repo, "worktree", "remove", "--force", "--", path)
                    if new_branch:
                        _git(repo, "branch", "-D", "--", branch)
                    raise WorktreeError(
                        f"the worktree's files could not be checked out: {err}"
                    ) from err
        except changes.GitError as err:
            raise WorktreeError(str(err)) from err


def _check_out(sealed: Sealed, path: str, tree: str) -> None:
    """``tree``'s files into the new worktree at ``path`` and its index, sealed (what ``git
    worktree add`` would have written, without the repository's filters)."""
    index = _git(path, "rev-parse", "--path-format=absolute", "--git-path", "index").strip()
    done = sealed.run("read-tree", "-m", "-u", tree, work_tree=path, index_file=index)
    if done.returncode != 0:
        raise WorktreeError(last_line(done.stderr) or f"git read-tree exited {done.returncode}")


def inspect(worktree: dict, scratch: str | None = None, private: tuple[str, ...] = ()) -> Loss:
    """Uncommitted changes (untracked files included), ignored files and commits reachable
    from the worktree but from no other local branch nor its base: what removing it would
    lose. ``scratch``: a private folder for the snapshot (default: a new temporary one);
    ``private``: the bridge's own dirs, never read."""
    path = worktree["path"]
    if not os.path.isdir(path):
        return Loss(exists=False)
    # --directory: an ignored directory (node_modules/) is one line, not its contents.
    ignored = _git(
        path, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    commits = _git(
        path,
        "log",
        "--no-show-signature",
        "--format=%h %s",
        "HEAD",
        "--not",
        worktree["base"],
        f"--exclude={worktree['branch']}",
        "--branches",  # the pattern omits refs/heads/
    )
    return Loss(
        True,
        uncommitted(path, scratch, private),
        commits.splitlines(),
        sorted(p for p in ignored.split("\0") if p),
    )


def uncommitted(
    path: str,
    scratch: str | None = None,
    private: tuple[str, ...] = (),
    deadline: float | None = None,
) -> list[str]:
    """What is not committed in the working tree at ``path``, as ``git status --porcelain``
    names it (``?? new.txt``, `` M a.txt``, `` D gone.txt``, ``A  staged.txt``; staged and
    unstaged changes are not told apart), read from a snapshot compared with ``HEAD``."""
    if scratch is None:
        with tempfile.TemporaryDirectory(prefix="discord-bridge-") as folder:
            return uncommitted(path, folder, private, deadline)
    try:
        root, tree, _ = changes.snapshot(path, scratch, deadline, private)
        untracked = changes.git(
            root, "ls-files", "-z", "--others", "--exclude-standard", deadline=deadline
        )
        out = changes.git(
            root,
            "diff-tree",
            "-r",
            "-z",
            "--name-status",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--end-of-options",
            tree_diff.head_tree(root),
            tree,
            deadline=deadline,
        )
    except changes.GitError as err:
        raise WorktreeError(str(err)) from err
    new = {p for p in untracked.decode(errors="replace").split("\0") if p}
    fields = [f for f in out.decode(errors="replace").split("\0") if f]
    lines = []
    for status, name in zip(fields[::2], fields[1::2], strict=False):
        if name in new:
            lines.append(f"?? {name}")
        else:
            lines.append(f"A  {name}" if status == "A" else f" {status[:1]} {name}")
    return lines


def remove(
    worktree: dict,
    force: bool = False,
    scratch: str | None = None,
    private: tuple[str, ...] = (),
) -> None:
    """Remove the worktree and its branch. Without ``force`` a worktree that holds anything
    :func:`inspect` lists (uncommitted, ignored or unmerged work) is refused, so nothing is
    lost by accident; ``git worktree remove --force`` then deletes what was checked (its own
    check would run ``git status``)."""
    repo = worktree["repo"]
    if os.path.isdir(worktree["path"]):
        if not force:
            loss = inspect(worktree, scratch, private)
            if loss.ignored:
                raise WorktreeError(f"{worktree['path']} holds ignored files; not removed")
            if loss.uncommitted or loss.unmerged:
                raise WorktreeError(
                    f"{worktree['path']} holds uncommitted or unmerged work; not removed"
                )
        _git(repo, "worktree", "remove", "--force", "--", worktree["path"])
    else:
        _git(repo, "worktree", "prune")
    if _git(repo, "branch", "--list", worktree["branch"]).strip():
        _git(repo, "branch", "-D" if force else "-d", "--", worktree["branch"])


def bridge_worktrees(project_path: str) -> list[str]:
    """Registered worktrees under ``<repo>/.claude/worktrees/`` (ours and ``claude -w``'s)."""
    repo = repo_root(project_path)
    if repo is None:
        return []
    prefix = os.path.join(repo, WORKTREES_DIR) + os.sep
    out = _git(repo, "worktree", "list", "--porcelain")
    paths = [line[len("worktree ") :] for line in out.splitlines() if line.startswith("worktree ")]
    return [p for p in paths if p.startswith(prefix)]


def _is_worktree(repo: str, path: str) -> bool:
    return os.path.realpath(path) in {os.path.realpath(p) for p in bridge_worktrees(repo)}


def _git(cwd: str, *args: str) -> str:
    """``git -C cwd args`` with the snapshots' fixed settings (``changes.git``)."""
    try:
        out = changes.git(cwd, *args, timeout=GIT_TIMEOUT)
    except changes.GitError as err:
        raise WorktreeError(str(err)) from err
    return out.decode(errors="replace")
