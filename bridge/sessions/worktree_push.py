"""Pushing a worktree thread's branch to the project's remote and opening a pull request:
Discord-free and blocking.

The remote is the one the base branch tracks (``branch.main.remote``), else ``origin``, else
the only one; the push goes to its ``pushurl`` (else its ``url``), the pull request into the
branch the base tracks there. Both are read from the repository's config as values and shown
before anything is pushed.

The push runs sealed (``sealed_git.py``) with the user's own global and system config: a push
to the user's remote uses their ssh keys and agent, credential helpers and ``insteadOf`` rules,
by design, and nothing of the repository's ``.git/config`` (its ``core.sshCommand``,
``credential.helper``, ``remote.<name>.receivepack``, ``url.<base>.insteadOf``, ``http.*``).
No hook runs (``pre-push``), transports are the four network ones (``ext::``, ``file``, remote
helpers never), and ssh gets no terminal to ask on.

Only a remote on the network is pushed to (:func:`off_network`): a remote that is a folder on
this machine is a repository Claude may have written, and its ``git receive-pack`` would run
here reading that repository's whole config (its hooks, ``core.alternateRefsCommand`` and
``core.fsmonitor`` through the shell, an ``updateInstead`` checkout through its filters); no
``-c`` lists every such key (measured with git 2.39: ``--receive-pack="git -c
core.hooksPath=/dev/null -c receive.denyCurrentBranch=refuse -c core.fsmonitor=false
receive-pack"`` still runs the receiving repository's ``alternateRefsCommand``), so such a push
is refused ("push from the terminal"), and git is allowed no ``file`` transport. The preview
shows where the push goes, and the remote's ``url`` too when its ``pushurl`` differs.

The pull request: ``gh pr create`` when ``gh`` is installed and logged in to the remote's host
(run outside the repository, with ``--repo`` and ``--head``, so gh's own git calls never touch
it); otherwise the link the remote printed ("Create a pull request … by visiting: …"), or a
compare link made from a GitHub or GitLab remote's address.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass, field

from bridge.sessions.changes import GitError, git, git_env, locate
from bridge.sessions.sealed_git import Sealed, last_line
from bridge.sessions.worktree_plan import (
    NOTHING,
    REFUSED,
    Plan,
    base_branch,
    branch_there,
    commits_between,
    planned,
    refuse_uncommitted,
    tip,
)

PUSH_TIMEOUT = 120.0  # seconds for the push (a large first push over a slow link)
GH_TIMEOUT = 60.0
PUSH_CONFIG = (
    "protocol.allow=never",  # every transport but these four (not ``file``: local paths):
    "protocol.git.allow=always",
    "protocol.ssh.allow=always",
    "protocol.http.allow=always",
    "protocol.https.allow=always",
    "protocol.ext.allow=never",  # (a command line as a URL) even if the user's config allows it
    "push.recurseSubmodules=no",
    "push.gpgSign=false",
)
# The user's own ways to reach a remote, kept from the bot's environment.
SSH_ENV = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT")
# git's URL scheme (and remote helper) names: ``is_urlschemechar`` in git's ``url.h``.
HELPER = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.-]*")
NETWORK = ("https", "http", "ssh", "git")
TERMINAL = "push from the terminal"
HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*|[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*")  # a name, IPv6
REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
WEB_PATH = re.compile(r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)+")
# A web address as shown: no brackets, parentheses or asterisks (Markdown), no spaces.
LINK = re.compile(r"https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/[A-Za-z0-9._~/%?=&+#:@!$,;-]*")


@dataclass
class PushPlan(Plan):
    """What pushing the thread's branch would do, or why it may not."""

    root: str = ""
    base: str = ""  # the project's branch ("main")
    target: str = ""  # the branch it tracks on the remote: the pull request's base
    remote: str = ""
    url: str = ""  # where the push goes (pushurl, else url)
    web_url: str = ""  # the remote's url (where its web pages are found)
    branch_tip: str = ""
    commits: list[str] = field(default_factory=list)
    commit_count: int = 0

    @property
    def branch(self) -> str:
        return self.worktree["branch"]

    @property
    def fingerprint(self) -> str:
        return self.digest(self.remote, self.url, self.target, self.branch_tip)


@dataclass
class PushResult:
    ok: bool
    summary: str  # what git said about the branch ("new branch", "rejected (non-fast-forward)")
    link: str | None = None  # the pull request, or where to open one
    opened: bool = False  # ``link`` is a pull request gh opened
    note: str = ""  # why gh did not open it, when it was there


def plan_push(
    worktree: dict, scratch: str, private: tuple[str, ...] = (), deadline: float | None = None
) -> PushPlan:
    """Where the branch would go and what it carries; problems: uncommitted work in the
    worktree (left out of a push as of a merge), no remote, nothing to push."""
    return planned(PushPlan(worktree), lambda plan: _plan(plan, scratch, private, deadline))


def _plan(plan: PushPlan, scratch: str, private: tuple[str, ...], deadline: float | None) -> None:
    worktree = plan.worktree
    repo = locate(worktree["repo"], deadline)
    plan.root = repo.root
    plan.base = base_branch(repo.root) or ""
    plan.branch_tip = tip(repo.root, f"refs/heads/{plan.branch}")
    if not branch_there(plan, plan.branch_tip):
        return
    refuse_uncommitted(plan, scratch, private, deadline, by="a push")
    plan.remote = _remote(repo.root, plan.base)
    if not plan.remote:
        plan.refuse(
            REFUSED,
            "the repository has no remote to push to (or "
            "several, and none that the project's branch tracks)",
        )
        return
    plan.web_url = _config(repo.root, "--get", f"remote.{plan.remote}.url")
    plan.url = _config(repo.root, "--get", f"remote.{plan.remote}.pushurl") or plan.web_url
    if not plan.url or plan.url.startswith("-"):
        plan.refuse(REFUSED, f"the remote `{plan.remote}` has no usable URL")
        return
    why = off_network(plan.url)
    if why:
        plan.refuse(
            REFUSED,
            f"the remote `{plan.remote}` pushes to {shown_urls(plan)}: {why}. "
            f"The bridge pushes only over {', '.join(NETWORK)}: {TERMINAL}",
        )
        return
    merge = _config(repo.root, "--get", f"branch.{plan.base}.merge") if plan.base else ""
    plan.target = (
        merge.removeprefix("refs/heads/") if merge.startswith("refs/heads/") else plan.base
    )
    # What the pull request would hold: the branch's commits not on the remote's base branch
    # as last fetched (else the project's own).
    old = tip(repo.root, f"refs/remotes/{plan.remote}/{plan.target}") or (
        tip(repo.root, f"refs/heads/{plan.base}") if plan.base else ""
    )
    if old:
        plan.commits, plan.commit_count = commits_between(repo.root, old, plan.branch_tip)
        if not plan.commit_count:
            plan.refuse(NOTHING, f"`{plan.branch}` has no commit that `{plan.target}` lacks")


def shown_urls(plan: PushPlan) -> str:
    """Where the push goes, and the remote's ``url`` too when its ``pushurl`` differs (a
    ``pushurl`` may be a folder named like a GitHub address while ``url`` is GitHub's)."""
    shown = f"`{_quoted(plan.url)}`"
    if plan.web_url and plan.web_url != plan.url:
        shown += f" (its `pushurl`; its `url` is `{_quoted(plan.web_url)}`)"
    return shown


def _quoted(text: str) -> str:
    """A remote's address inside inline code (a backtick would end it early)."""
    text = text.replace("`", "ˋ")
    return text if len(text) <= 200 else text[:199] + "…"


def _remote(root: str, base: str) -> str:
    """The remote the base branch tracks, else ``origin``, else the only one ("" if none)."""
    tracked = _config(root, "--get", f"branch.{base}.remote") if base else ""
    names = sorted(
        {
            key.split(".", 1)[1].rsplit(".", 1)[0]
            for key in _config(
                root, "--name-only", "--get-regexp", r"^remote\..*\.url$"
            ).splitlines()
        }
    )
    for name in (tracked, "origin"):
        if name in names:
            return name if REMOTE_NAME.fullmatch(name) else ""
    return names[0] if len(names) == 1 and REMOTE_NAME.fullmatch(names[0]) else ""


def _config(root: str, *args: str) -> str:
    """``git config args`` (a value, read as data): "" when unset."""
    try:
        out = git(root, "config", *args)
    except GitError:
        return ""
    return out.decode(errors="replace").strip()


def transport(url: str) -> str:
    """How git reaches the remote ``url``: ``https``, ``http``, ``ssh``, ``git`` (the network),
    ``file`` (a folder on this machine) or ``helper`` (a ``git-remote-<name>`` program).

    git's own rule (``transport.c`` ``transport_get``, ``connect.c`` ``url_is_local_not_ssh``,
    ``url.c`` ``is_url``), measured with git 2.39 (``git ls-remote`` under ``GIT_TRACE``):
    ``x+y::foo``, ``1x::foo``, ``a.b::c`` run ``git-remote-x+y`` … (a name of ``[A-Za-z0-9]
    [A-Za-z0-9+.-]*`` then ``::``); ``HTTPS://h/x`` runs ``git-remote-HTTPS`` (a scheme is
    matched case-sensitively); ``./mirror::app``, ``foo/bar::baz``, ``p/q:r``
    are folders (a slash before the first colon, or no colon); ``.x::foo``, ``file:foo``,
    ``c:/x``, ``h:p/q``, ``u@h:p`` are ssh to the host before the colon (on Linux: no drive
    letters)."""
    name = HELPER.match(url)
    if name and url[name.end() :].startswith("::"):
        return "helper"
    if name and url[name.end() :].startswith("://"):
        scheme = {"git+ssh": "ssh", "ssh+git": "ssh"}.get(name[0], name[0])  # (old spellings)
        return scheme if scheme in (*NETWORK, "file") else "helper"
    colon, slash = url.find(":"), url.find("/")
    return "file" if colon < 0 or 0 <= slash < colon else "ssh"


def off_network(url: str) -> str:
    """Why the bridge does not push to ``url`` ("" when it does: a remote on the network)."""
    how = transport(url)
    if how == "file":
        return "a folder on this machine, whose own git config would run commands here"
    if how == "helper":
        return "reached through a remote helper, a program of this machine"
    try:
        parts = urllib.parse.urlsplit(url) if "://" in url else None
    except ValueError:
        return "not an address with a plain host name"
    user, _, host = (parts.netloc if parts else url.partition(":")[0]).rpartition("@")
    if parts is not None:
        host = parts.hostname or ""
    if user.startswith("-") or not HOST.fullmatch(host):
        return "not an address with a plain host name"
    return ""


def push(plan: PushPlan, scratch: str, title: str, body: str) -> PushResult:
    """Push the branch's tip previewed to ``refs/heads/<branch>`` of the remote (never
    forced), then open a pull request (``title``, ``body``) or find where to open one."""
    if off_network(plan.url):  # (a plan refuses it first)
        return PushResult(False, f"not a remote on the network: {TERMINAL}")
    args = [
        "push",
        "--porcelain",
        "--no-verify",
        "--end-of-options",
        plan.url,
        f"{plan.branch_tip}:refs/heads/{plan.branch}",
    ]
    env = {name: os.environ[name] for name in SSH_ENV if name in os.environ}
    with Sealed(plan.root, scratch, user_config=True) as sealed:
        done = sealed.run(
            *args,
            env=env,
            config=PUSH_CONFIG,
            timeout=PUSH_TIMEOUT,
            new_session=True,
            cwd=plan.root,
        )
    summary = _summary(done.stdout.decode(errors="replace"), plan.branch)
    if done.returncode != 0:
        said = summary or last_line(done.stderr) or f"git push exited {done.returncode}"
        return PushResult(False, said)
    try:  # the user's `git status` in the worktree sees it pushed
        git(plan.root, "update-ref", f"refs/remotes/{plan.remote}/{plan.branch}", plan.branch_tip)
    except GitError:
        pass
    offered = offered_link(done.stderr.decode(errors="replace"))
    made = compare_url(plan.web_url or plan.url, plan.target, plan.branch)
    result = PushResult(True, summary or "pushed", offered or made)
    host = web_host(plan.web_url or plan.url)
    if host and shutil.which("gh"):
        url, note = open_with_gh(host, plan, title, body, scratch)
        if url:
            result.link, result.opened = url, True
        result.note = note
    return result


def _summary(porcelain: str, branch: str) -> str:
    """git's word on the pushed ref (``[new branch]``, ``[rejected] (non-fast-forward)``)."""
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].endswith(f":refs/heads/{branch}"):
            return parts[2].strip()
    return ""


def offered_link(stderr: str) -> str | None:
    """The address a remote printed for opening a pull (merge) request after a push, e.g.
    GitHub's ``remote: Create a pull request for 'x' on GitHub by visiting:`` and the next
    line, GitLab's ``remote: To create a merge request for x, visit:``. Only a plain https
    address is taken (it is the remote's text: shown, never followed)."""
    asked = False
    for line in stderr.splitlines():
        if not line.startswith("remote:"):
            continue
        text = line[len("remote:") :].strip()
        lowered = text.lower()
        if "pull request" in lowered or "merge request" in lowered:
            asked = True
        found = LINK.search(text)
        if asked and found and len(found[0]) <= 400:
            return found[0]
    return None


def _parse_remote(url: str) -> tuple[str, str] | None:
    """``(host, owner/repo path)`` of an ssh, scp-like, http(s) or git remote address."""
    if "://" in url:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("https", "http", "ssh", "git", "git+ssh", "ssh+git"):
            return None
        host, path = parsed.hostname or "", parsed.path
        if parsed.scheme in ("https", "http") and parsed.port:
            host = f"{host}:{parsed.port}"
    elif transport(url) == "ssh":
        host, _, path = url.partition(":")
        host = host.rsplit("@", 1)[-1]
    else:
        return None
    path = path.strip("/").removesuffix(".git")
    if not host or ".." in path or not WEB_PATH.fullmatch(path):
        return None
    return host.lower(), path


def web_host(url: str) -> str | None:
    """The GitHub host of a remote address (``github.com``, ``github.example.com``), or None."""
    parsed = _parse_remote(url)
    if parsed is None or "github" not in parsed[0]:
        return None
    return "github.com" if parsed[0] == "ssh.github.com" else parsed[0]


def compare_url(url: str, target: str, branch: str) -> str | None:
    """Where to open a pull request of ``branch`` into ``target`` on a GitHub or GitLab remote
    (their web pages' forms), or None for any other remote."""
    parsed = _parse_remote(url)
    if parsed is None or not target:
        return None
    host, path = parsed
    quote = urllib.parse.quote
    if "github" in host:
        host = "github.com" if host == "ssh.github.com" else host
        return f"https://{host}/{path}/compare/{quote(target)}...{quote(branch)}?expand=1"
    if "gitlab" in host:
        query = urllib.parse.urlencode(
            {"merge_request[source_branch]": branch, "merge_request[target_branch]": target}
        )
        return f"https://{host}/{path}/-/merge_requests/new?{query}"
    return None


def open_with_gh(
    host: str, plan: PushPlan, title: str, body: str, scratch: str
) -> tuple[str | None, str]:
    """``gh pr create`` on ``host`` when gh is logged in there: (the pull request's address,
    "") — or (None, why not). gh runs in ``scratch`` (no repository), never prompting."""
    parsed = _parse_remote(plan.web_url or plan.url)
    if parsed is None:
        return None, ""
    env = git_env()
    env.update(
        GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1", GH_SPINNER_DISABLED="1"
    )
    status = _gh(["auth", "status", "--hostname", host], env, scratch)
    if status is None or status.returncode != 0:
        return None, f"gh is not logged in to {host} (`gh auth login`)"
    where = ["--repo", f"{host}/{parsed[1]}", "--base", plan.target, "--head", plan.branch]
    created = _gh(["pr", "create", *where, "--title", title, "--body", body], env, scratch)
    if created is None or created.returncode != 0:
        said = last_line(created.stderr) if created is not None else "did not answer"
        return None, f"gh could not open the pull request: {said[:200]}"
    found = LINK.search(created.stdout.decode(errors="replace"))
    return (found[0], "") if found else (None, "gh printed no address")


def _gh(args: list[str], env: dict[str, str], cwd: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(
            ["gh", *args],
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=GH_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
