"""What a turn changed in a session's git repository: snapshots, change summaries, diffs.

A snapshot is the tree of the whole working tree (tracked files as they are on disk, deleted
ones gone, untracked files that git does not ignore included), written into the repository's
object store through a *temporary* index: a copy of the real index (unchanged files are not
hashed again), the changed entries replaced by blob ids, then ``git write-tree``. The user's
index, ``HEAD``, refs and files are never touched; the snapshot is only an object id.
Comparing two snapshots (``git diff-tree``) gives what happened in between: the
UserPromptSubmit hook takes one at the start of a turn, the Stop hook another at its end
(``bridge/handlers/turn_changes.py``); ``/diff`` takes one too. Comparing, and reading one
file of a tree, is :mod:`bridge.sessions.tree_diff`'s; here: taking snapshots, git run safely.

**The repository is not ours and may be hostile** (Claude can write ``.git/config`` and
``.gitattributes``). No command the repository defines may run, whatever it names, and
nothing outside its working tree may be read into a snapshot. Rather than list what to
neutralise (a filter driver may be named ``x=y`` or ``""``: no ``-c`` can name those), git
never reads a working-tree file's content:

1. ``diff-files --name-status`` names the tracked files whose stat data differ from the
   index, ``ls-files --others`` the untracked ones: stat calls and directory listings only.
   The one way either reads content is git's "racy" check (a file modified no earlier than
   the index was written is re-read, through its filters, to compare): the temporary index
   is dated at the epoch (:func:`_never_racy`), which leaves git no racy entry, and the
   bridge finds those entries in the index itself and tests or hashes them
   (``git_index.read_index``). A small index (up to ``STAT_HERE`` entries) gets the
   whole stat test in the bridge: no ``diff-files`` at all. Seen: without the dating,
   ``diff-files`` and ``update-index`` ran a ``clean`` filter.
2. The bridge opens those files itself, never following a symlink, and ``git hash-object -w
   --no-filters`` hashes the open descriptors (``bridge/sessions/snapshot_files.py``).
3. ``update-index -z --index-info`` (ids and modes) and ``write-tree`` build the tree.

What was checked, mechanism by mechanism (git 2.39; each with a test in
tests/unit/sessions/test_changes.py, the e2e ones in tests/e2e/test_changes_and_usage.py):

- Filter drivers (``clean``/``smudge``/``process``, any name, from ``.gitattributes`` or
  ``.git/info/attributes``), ``ident``, ``text``/``eol``/``core.autocrlf``,
  ``working-tree-encoding``: git applies them only when it converts a working-tree file,
  which it never does here. So a snapshot holds the bytes on disk: a file git would convert
  (``eol=crlf``) shows every line changed against ``HEAD`` in ``/diff``.
- ``core.fsmonitor`` (a command run when an index is read): ``-c core.fsmonitor=false`` on
  every call (a fixed key is safe on ``-c``: only a name taken from the repository could
  carry an ``=``). ``core.hooksPath=/dev/null``: writing an index runs ``post-index-change``.
  ``core.checkStat``/``core.trustctime`` forced to git's strictest: a repository cannot make
  the stat test blind to an edit.
- Submodules: ``diff-files`` would run ``git status`` in a dirty submodule, under the
  submodule's own config: ``--ignore-submodules=all``. A submodule keeps the commit the index
  records (a nested repository's files are not this tree's content either).
- ``diff.external``, ``diff.<driver>.command``/``textconv`` (``diff=`` attributes):
  ``--no-ext-diff --no-textconv``; ``diff-tree`` compares trees from the object store, never
  the working tree; ``--submodule=short``: no submodule repository opened.
- A partial clone fetches a missing object on demand through ``core.sshCommand``, a local
  ``remote.<name>.uploadpack`` or ``ext::`` (seen: a ``diff-tree`` ran ``core.sshCommand``):
  ``-c protocol.allow=never`` refuses every transport (and ``GIT_NO_LAZY_FETCH=1`` for git
  ≥ 2.44); the diff fails on the missing object instead. ``core.askPass``, credential
  helpers, ``core.gitProxy``: network only, never reached.
- ``core.pager``/``pager.*``: ``--no-pager``, ``GIT_PAGER=cat``. ``gpg.program``, editors,
  ``gc --auto`` (``gc.auto=0``, ``maintenance.auto=false``): none of these commands run them.
  ``trace2.*`` is read from system and global config only; the caller's ``GIT_*`` are dropped.
- ``core.worktree`` can put the working tree anywhere, ``/`` included: refused unless the
  working tree git reports holds the ``.git`` it found and the session's directory. A git
  root holding the bridge's home, config, runtime or state dir (a dotfiles repository at
  ``~``): those are never read (``private``), and a repository inside one of them is not
  snapshotted.
- The working tree: symlinks are stored as links, never followed, and a folder swapped for a
  symlink reads as gone (even in a race: folders are opened one by one with
  ``O_NOFOLLOW``); FIFOs, sockets and devices are never opened; untracked files over 8 MiB or
  beyond 5000 are left out and named. ``.git/index`` is copied only when it is a regular file
  (``O_NOFOLLOW``, ``S_ISREG``) under 128 MiB, against the deadline (a symlink to
  ``/dev/zero`` used to be copied without end).
- Read by git, harmless, bounded by the timeouts: ``include.path``/``includeIf`` (more
  config: the fixed keys above still win), ``core.excludesFile``/``core.attributesFile``
  (they select names and attributes, never shown), a split index's ``sharedindex.*``,
  ``objects/info/alternates`` (a ``/diff`` base may name an object of another store, shown
  only to the owner; snapshots write only into the repository's own store), a ``.git`` file
  pointing at another repository (as a worktree's does: the snapshot's objects go to that
  repository's store). A FIFO among these stalls git until its timeout: no snapshot.

Every git call has a timeout and, in the hooks, a deadline; any failure is "no snapshot"
(fail closed), never a snapshot taken another way.
"""

from __future__ import annotations

import os
import subprocess

from bridge.sessions import git_index, snapshot_files

TIMEOUT = 10.0  # seconds per git command
# Files per ``git hash-object``: each holds a descriptor open meanwhile (well under the
# usual limit of 1024, so the bot's own sockets and files never run short).
HASH_BATCH = 256
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.checkStat=default",  # git's stat test at its strictest (a repository can relax it)
    "core.trustctime=true",
    "core.pager=cat",
    "core.untrackedCache=false",
    "core.splitIndex=false",  # the temporary index is written whole, no sharedindex.* left
    "index.sparse=false",
    "protocol.allow=never",  # no lazy fetch of a partial clone's missing object
    "gc.auto=0",
    "maintenance.auto=false",
    "diff.external=",
    "color.ui=false",
)


class GitError(RuntimeError):
    """git failed, timed out or is missing, or the snapshot was refused; the message says
    which and why."""


class NotARepository(GitError):
    """The directory is not inside a git working tree."""


# --- running git ------------------------------------------------------------------------


def git_env(index_file: str | None = None) -> dict[str, str]:
    """The environment of every git call: nothing of the caller's ``GIT_*``, never a prompt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("SSH_ASKPASS", None)
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_PAGER="cat",
        PAGER="cat",
        LC_ALL="C",
    )
    if index_file:
        env["GIT_INDEX_FILE"] = index_file
    return env


def git(
    cwd: str,
    *args: str,
    index_file: str | None = None,
    stdin: bytes | None = None,
    pass_fds: tuple[int, ...] = (),
    timeout: float = TIMEOUT,
    deadline: float | None = None,
) -> bytes:
    """Run ``git -C cwd <safe config> args`` and return its stdout; :class:`GitError` if it
    fails, times out or is missing. ``deadline`` (``time.monotonic()``): no command runs past
    it; ``pass_fds``: descriptors the command inherits (``/proc/self/fd/N``)."""
    if deadline is not None:
        import time

        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise GitError(f"git {args[0]}: no time left")
    argv = ["git", "--no-pager", "-C", cwd]
    for setting in _SAFE_CONFIG:
        argv += ["-c", setting]
    argv += list(args)
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            env=git_env(index_file),
            timeout=timeout,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            check=False,
            pass_fds=pass_fds,
        )
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


# --- snapshots --------------------------------------------------------------------------


class Repository:
    """Where a snapshot is taken: the top of the working tree, the index file, the null
    object id (its length: the repository's hash). (Not a NamedTuple: ``typing`` costs the
    hooks milliseconds to import.)"""

    __slots__ = ("index", "root", "zero")

    def __init__(self, root: str, index: str, zero: bytes) -> None:
        self.root, self.index, self.zero = root, index, zero


def repo_of(path: str, deadline: float | None = None) -> tuple[str, str]:
    """The top of the working tree holding ``path`` and the path of its index file.
    :class:`NotARepository` when there is none (or ``path`` is inside ``.git``);
    :class:`GitError` when the repository puts its working tree elsewhere."""
    repo = locate(path, deadline)
    return repo.root, repo.index


def locate(path: str, deadline: float | None = None) -> Repository:
    """:func:`repo_of`, with the repository's hash (one ``git rev-parse``)."""
    if not os.path.isdir(path):
        raise NotARepository(f"{path} is not a directory")
    try:
        out = git(
            path,
            "rev-parse",
            "--show-object-format",
            "--show-toplevel",
            "--git-path",
            "index",
            deadline=deadline,
        )
    except GitError as err:
        if "work tree" in str(err):  # inside .git, or a bare repository
            raise NotARepository("not in a git working tree") from err
        raise
    lines = out.decode(errors="surrogateescape").splitlines()
    if len(lines) != 3 or not lines[1]:
        raise NotARepository("not in a git working tree")
    form, root, index = lines
    # The working tree is where the .git git found is (``core.worktree`` can name any
    # folder, even ``/`` above the project: every file of the machine to snapshot).
    if not _inside(os.path.realpath(path), os.path.realpath(root)) or not os.path.lexists(
        os.path.join(root, ".git")
    ):
        raise GitError("the repository's working tree is elsewhere (core.worktree)")
    index = index if os.path.isabs(index) else os.path.join(path, index)
    return Repository(root, index, b"0" * (64 if form == "sha256" else 40))


def snapshot(
    path: str,
    scratch: str,
    deadline: float | None = None,
    private: tuple[str, ...] = (),
) -> tuple[str, str, list[str]]:
    """Snapshot the working tree holding ``path``: ``(root, tree id, skipped untracked files)``.

    ``scratch`` is a private directory for the temporary index (removed afterwards);
    ``deadline`` (``time.monotonic()``): give up (:class:`GitError`) rather than run past it;
    ``private``: folders and files never read (the bridge's own).
    """
    repo = locate(path, deadline)
    tree, skipped = snapshot_at(repo, scratch, deadline, private)
    return repo.root, tree, skipped


def snapshot_at(
    repo: Repository,
    scratch: str,
    deadline: float | None = None,
    private: tuple[str, ...] = (),
) -> tuple[str, list[str]]:
    """:func:`snapshot` of a repository already located: ``(tree id, skipped files)``."""
    root, zero = repo.root, repo.zero
    private_ids = _private_ids(root, private)
    try:
        tmp_index, data, index_mtime = git_index.copy_index(repo.index, scratch, deadline)
    except git_index.Refused as err:
        raise GitError(str(err)) from err
    try:
        facts = _read_index(root, tmp_index, data, index_mtime, len(zero) // 2, deadline)
        changed, untracked = _to_read(root, tmp_index, facts, private_ids, deadline)

        def hash_files(fds: list[int]) -> list[str]:
            return _hash_files(root, fds, deadline)

        updates, skipped = snapshot_files.scan(
            root, changed, untracked, zero, private_ids, hash_files, HASH_BATCH, deadline
        )
        if not updates and facts.tree:
            return facts.tree, skipped  # nothing changed: the index's own tree
        if updates:
            _never_racy(tmp_index)
            git(
                root,
                "update-index",
                "-z",
                "--index-info",
                index_file=tmp_index,
                stdin=updates,
                deadline=deadline,
            )
        _never_racy(tmp_index)
        tree = git(root, "write-tree", index_file=tmp_index, deadline=deadline).decode().strip()
    except git_index.Refused as err:
        raise GitError(str(err)) from err
    finally:
        _unlink(tmp_index)
        _unlink(tmp_index + ".lock")
    return tree, skipped


def _read_index(
    root: str,
    tmp_index: str,
    data: bytes,
    index_mtime: int,
    hash_size: int,
    deadline: float | None,
) -> git_index.IndexFacts:
    """The racy entries and cached tree of the index (version 4, split or sparse: the copy
    written out whole first)."""
    facts = git_index.read_index(data, hash_size, index_mtime)
    if facts is None:
        _never_racy(tmp_index)
        git(root, "update-index", "--index-version", "2", index_file=tmp_index, deadline=deadline)
        with open(tmp_index, "rb") as whole:  # our own file, in our private scratch dir
            facts = git_index.read_index(whole.read(), hash_size, index_mtime)
        if facts is None:
            raise GitError("the repository's index cannot be read whole")
    return facts


def _to_read(
    root: str,
    tmp_index: str,
    facts: git_index.IndexFacts,
    private: set[tuple[int, int]],
    deadline: float | None,
) -> tuple[list[bytes], list[bytes]]:
    """The tracked paths to read and the untracked ones. A large index's stat test is
    ``git diff-files``'s (but for the entries it cannot vouch for)."""
    _never_racy(tmp_index)
    changed = snapshot_files.stale(root, facts.compare, private, deadline) + facts.must_read
    if not facts.whole:
        out = git(
            root,
            "diff-files",
            "-z",
            "--name-status",
            "--no-renames",
            "--ignore-submodules=all",
            index_file=tmp_index,
            deadline=deadline,
        )
        changed += snapshot_files.paths(out, name_status=True)
    listed = git(
        root,
        "ls-files",
        "-z",
        "--others",
        "--exclude-standard",
        index_file=tmp_index,
        deadline=deadline,
    )
    return changed, snapshot_files.paths(listed)


def _never_racy(index: str) -> None:
    """Date the temporary index at the epoch before git reads it. git re-reads a "racily
    clean" entry's file (modified no earlier than the index was written), through the
    repository's filters, when it compares it (``diff-files``) and before it writes an index
    (``update-index``, ``write-tree``): seen running a ``clean`` filter from both. An index
    dated 0 has no racy entry (``is_racy_stat`` tests ``istate->timestamp.sec`` first); the
    bridge re-reads those files itself (:func:`git_index.read_index`)."""
    try:
        os.utime(index, ns=(0, 0))
    except FileNotFoundError:
        pass  # no index yet: git starts an empty one, with no entries to re-read


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _hash_files(root: str, fds: list[int], deadline: float | None) -> list[str]:
    """Blob ids of open files, written to the object store: git reads each through
    ``/proc/self/fd/N`` (the file that was checked), never converting it."""
    paths = b"".join(b"/proc/self/fd/%d\n" % fd for fd in fds)
    out = git(
        root,
        "hash-object",
        "-w",
        "--no-filters",
        "--stdin-paths",
        stdin=paths,
        pass_fds=tuple(fds),
        deadline=deadline,
    )
    oids = out.decode().split()
    if len(oids) != len(fds):
        raise GitError("git hash-object: not one id per file")
    return oids


def _private_ids(root: str, private: tuple[str, ...]) -> set[tuple[int, int]]:
    """``(st_dev, st_ino)`` of the bridge's own folders and files; :class:`GitError` when the
    repository is inside one of them."""
    ids = set()
    top = os.path.realpath(root)
    for path in private:
        if not path:
            continue
        if _inside(top, os.path.realpath(path)):
            raise GitError(f"this repository is inside the bridge's own folder {path}")
        try:
            info = os.stat(path)
        except OSError:
            continue
        ids.add((info.st_dev, info.st_ino))
    return ids


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
