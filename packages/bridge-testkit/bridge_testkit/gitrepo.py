"""A throwaway git repository for tests: real git, a fixed identity, nothing from the user."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]


def git(path: Path, *args: str) -> str:
    """Run ``git -C path args`` (raises on failure); its stdout."""
    return subprocess.run(
        ["git", "-C", str(path), *IDENTITY, *args], capture_output=True, text=True, check=True
    ).stdout


def make_repo(path: Path, files: dict[str, str], message: str = "initial") -> Path:
    """A repository at ``path`` on branch ``main`` with ``files`` committed."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for name, content in files.items():
        (path / name).write_text(content)
    git(path, "add", ".")
    git(path, "commit", "-qm", message)
    return path


def signed_looking_commit(path: Path, message: str, *flags: str) -> str:
    """Commit the index at ``path`` as a commit whose header claims a signature (``git log``
    asks the repository's ``gpg.program`` about it under ``log.showSignature``); moves HEAD.
    ``flags``: ``-c`` settings for the test's own git."""
    tree = git(path, *flags, "write-tree").strip()
    parent = git(path, *flags, "rev-parse", "HEAD").strip()
    who = "T <t@example.invalid> 1700000000 +0000"
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n -----END PGP SIGNATURE-----\n"
    body = f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n{signature}\n{message}\n"
    oid = subprocess.run(
        ["git", "-C", str(path), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=body,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(path, *flags, "update-ref", "HEAD", oid)
    return oid


def fake_ssh(folder: Path, log: Path) -> Path:
    """An ``ssh`` for ``GIT_SSH``: records its arguments in ``log`` and runs the command git
    asks the remote host to run (``git-receive-pack '/path'``) here, as a server would: in
    ``/``, with none of the pushing git's environment. A remote ``ssh://<any host>/<path>``
    is then the repository at ``<path>``, reached the way a network remote is."""
    ssh = folder / "ssh"  # (git takes a program named ssh for OpenSSH's options)
    ssh.write_text(
        "#!/bin/sh\nfor last; do :; done\n"
        f"printf '%s\\n' \"$*\" >> '{log}'\n"
        "cd / && exec /usr/bin/env -i PATH=/usr/bin:/bin HOME=/nonexistent "
        'GIT_CONFIG_NOSYSTEM=1 /bin/sh -c "$last"\n'
    )
    ssh.chmod(0o755)
    return ssh
