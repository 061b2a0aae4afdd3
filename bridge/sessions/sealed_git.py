"""git on a repository's objects under a git dir of the bridge's making: for the calls that
write a branch, files or a remote (a thread's merge, the checkout of its new worktree, its
push), where the snapshots' way (``changes.py``: git never reads a working-tree file) is not
enough.

``git merge`` runs the repository's hooks (``pre-merge-commit``, ``post-merge``), its merge
drivers (``merge.<name>.driver`` named by ``.gitattributes``, or ``merge.default``) and, when
it checks the merged files out, its filters (``smudge``, ``process``); ``git commit-tree``
signs with ``gpg.program`` when ``commit.gpgSign`` says so; ``git worktree add`` checks the
files out through the filters too; ``git push`` runs ``pre-push``,
``core.sshCommand``, credential helpers and ``remote.<name>.receivepack``. Every one of these
is a command named in the repository's ``.git/config`` (which Claude can write), under a name
no ``-c`` can neutralise (a driver may be called ``x=y``). So these calls never read that
file: :class:`Sealed` runs git with ``GIT_DIR`` a fresh, empty git dir in the bridge's
private scratch folder and ``GIT_OBJECT_DIRECTORY`` the repository's object store. git then
sees the repository's objects (the commits and trees to merge, new objects written there)
and, where asked, its work tree and index (``GIT_WORK_TREE``, ``GIT_INDEX_FILE``), and no
config, hooks, ``info/attributes``, refs, grafts or replace refs of it. Measured with git
2.39 (``tests/unit/sessions/test_worktree_finish.py``): a merge driver that runs in a plain
``git merge-tree`` of the same commits does not run sealed, nor a smudge or clean filter, an
fsmonitor, or a hook.

Two levels of the user's own config:

- ``user_config=False`` (merge, checkouts, commit): the system and global config are not read
  either (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``): no driver or filter is
  defined anywhere, whatever ``.gitattributes`` names. The identity of a merge commit is read
  from the repository beforehand (``git var``: values, never commands).
- ``user_config=True`` (push): the user's global and system config are read — a push to the
  user's remote uses their ssh set-up, credential helpers and ``insteadOf`` rules, by design —
  and the repository's still is not.

A file whose attributes ask git to convert it (:func:`converted`: a ``filter``, a
``working-tree-encoding``) would be written as git stores it: the callers refuse such files.

Fixed keys are still passed on the command line (``core.hooksPath=/dev/null``,
``core.fsmonitor=false``, …; a fixed key is safe on ``-c``), and the caller's ``GIT_*`` are
dropped (``changes.git_env``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from bridge.sessions.changes import GitError, git, git_env

TIMEOUT = 30.0  # seconds per sealed git command (a merge of a large tree, a checkout)
# Fixed keys on every sealed call: no hook, fsmonitor, pager, background gc, and no network
# unless the caller lets a transport through (push).
SEALED_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.splitIndex=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "color.ui=false",
)
NO_NETWORK = ("protocol.allow=never",)
CONVERTED = ("filter", "working-tree-encoding")  # attributes whose files git converts
# core.* booleans git sets per repository at init from what the file system can do: the sealed
# checkout must write files as the repository's own git would (modes, symlinks, case).
FS_KEYS = ("core.filemode", "core.symlinks", "core.ignorecase", "core.precomposeunicode")


class Sealed:
    """The repository whose working tree is ``root``, as sealed git calls see it: use as a
    context manager (``with Sealed(root, scratch) as sealed:``); the git dir is removed at
    the end. ``scratch``: a private folder of the bridge's."""

    def __init__(self, root: str, scratch: str, user_config: bool = False) -> None:
        self.root = root
        self.scratch = scratch
        self.user_config = user_config
        self.git_dir = ""
        self.objects, self.object_format, self.fs_config = _repository_facts(root)

    def __enter__(self) -> Sealed:
        self.git_dir = tempfile.mkdtemp(prefix="sealed-", dir=self.scratch)
        for name in ("objects", "refs", "info"):
            os.mkdir(os.path.join(self.git_dir, name), 0o700)
        with open(os.path.join(self.git_dir, "HEAD"), "w") as head:
            head.write("ref: refs/heads/sealed\n")
        version = int(self.object_format != "sha1")  # another hash needs format 1
        config = f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n"
        if self.object_format != "sha1":
            config += f"[extensions]\n\tobjectFormat = {self.object_format}\n"
        with open(os.path.join(self.git_dir, "config"), "w") as handle:
            handle.write(config)
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.git_dir, ignore_errors=True)

    def run(
        self,
        *args: str,
        work_tree: str | None = None,
        index_file: str | None = None,
        env: dict[str, str] | None = None,
        config: tuple[str, ...] = NO_NETWORK,
        stdin: bytes | None = None,
        timeout: float = TIMEOUT,
        new_session: bool = False,
        cwd: str | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """``git <sealed settings> args``, whatever its exit status (the caller reads it:
        ``merge-tree`` says "conflicts" with 1). :class:`GitError` when git cannot run or
        takes longer than ``timeout``. ``config``: more fixed ``-c`` settings (default: no
        network); ``new_session``: no controlling terminal (ssh cannot ask for anything);
        ``cwd``: where a relative path in the arguments starts (default: the work tree)."""
        argv = ["git", "--no-pager"]
        for setting in (*SEALED_CONFIG, *self.fs_config, *config):
            argv += ["-c", setting]
        full_env = git_env(index_file)
        full_env.update(GIT_DIR=self.git_dir, GIT_OBJECT_DIRECTORY=self.objects)
        if work_tree is not None:
            full_env["GIT_WORK_TREE"] = work_tree
        if not self.user_config:
            full_env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        full_env.update(env or {})
        try:
            return subprocess.run(
                [*argv, *args],
                input=stdin,
                capture_output=True,
                env=full_env,
                timeout=timeout,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                check=False,
                cwd=cwd or work_tree or self.git_dir,
                start_new_session=new_session,
            )
        except subprocess.TimeoutExpired as err:
            raise GitError(f"git {args[0]} took more than {timeout:.0f} s") from err
        except OSError as err:
            raise GitError(f"git {args[0]}: {err}") from err

    def check(self, *args: str, **kwargs: object) -> bytes:
        """:meth:`run`, its stdout; :class:`GitError` (git's last line) unless it exits 0."""
        done = self.run(*args, **kwargs)  # type: ignore[arg-type]
        if done.returncode != 0:
            raise GitError(f"git {args[0]}: {last_line(done.stderr) or done.returncode}")
        return done.stdout


def converted(sealed: Sealed, tree: str, paths: list[str]) -> list[str]:
    """Which of ``paths`` git would convert when it writes them from ``tree`` (a ``filter``
    such as Git LFS, a ``working-tree-encoding``), by the tree's ``.gitattributes`` and by the
    repository's own attribute files (``info/attributes``, ``core.attributesFile``): a sealed
    checkout runs no filter, so it would write them as git stores them."""
    if not paths:
        return []
    listed = "".join(f"{path}\0" for path in paths).encode(errors="surrogateescape")
    index = os.path.join(sealed.git_dir, "attributes-index")  # (read-tree writes it anew)
    sealed.check("read-tree", tree, index_file=index)
    found = sealed.check(
        "check-attr", "-z", "--cached", "--stdin", *CONVERTED, index_file=index, stdin=listed
    )
    found += git(sealed.root, "check-attr", "-z", "--stdin", *CONVERTED, stdin=listed)
    fields = found.decode(errors="replace").split("\0")
    return sorted(
        {
            fields[i]
            for i in range(0, len(fields) - 2, 3)
            if fields[i + 2] not in ("unspecified", "unset")
        }
    )


def last_line(output: bytes) -> str:
    lines = output.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def _repository_facts(root: str) -> tuple[str, str, tuple[str, ...]]:
    """The repository's object store (absolute), its hash and its file-system booleans, read
    with the snapshots' safe settings (``rev-parse`` and ``config`` read values only)."""
    out = git(root, "rev-parse", "--show-object-format", "--git-common-dir").decode()
    lines = out.splitlines()
    if len(lines) != 2 or lines[0] not in ("sha1", "sha256"):
        raise GitError("git rev-parse printed something unexpected")
    common = lines[1] if os.path.isabs(lines[1]) else os.path.join(root, lines[1])
    objects = os.path.join(os.path.realpath(common), "objects")
    if not os.path.isdir(objects):
        raise GitError("the repository has no object store")
    pattern = "^(" + "|".join(key.replace(".", r"\.") for key in FS_KEYS) + ")$"
    try:
        found = git(root, "config", "-z", "--bool", "--get-regexp", pattern).decode()
    except GitError:
        found = ""  # none of them set (git config exits 1)
    settings = []
    for entry in found.split("\0"):
        key, _, value = entry.partition("\n")
        if key.lower() in {k.lower() for k in FS_KEYS} and value in ("true", "false"):
            settings.append(f"{key.lower()}={value}")
    return objects, lines[0], tuple(settings)
