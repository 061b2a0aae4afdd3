"""Pushing a worktree thread's branch with real git to a bare remote reached over "ssh" (a
stand-in that runs git's remote command here, as a server would): the push lands, no command
of the repository runs, and the pull request is opened by gh or offered as the remote's link.
A remote that is a folder on this machine is never pushed to: its own config would run
commands here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.sessions import worktree_push, worktrees
from bridge.sessions.worktree_plan import NOTHING, REFUSED, UNCOMMITTED
from bridge_testkit.gitrepo import fake_ssh, git, make_repo

THREAD = "1323802873070354440"
BRANCH = f"worktree-feature-{THREAD}"
WEB = "https://github.com/acme/shop.git"


@pytest.fixture
def scratch(tmp_path: Path) -> str:
    path = tmp_path / "scratch"
    path.mkdir(mode=0o700)
    return str(path)


@pytest.fixture
def path_without_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding git and nothing else (this machine has no gh; a test adds its own)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


@pytest.fixture
def ssh_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's ssh (``GIT_SSH`` in the bot's environment, kept for the push): a stand-in;
    the file it records its arguments in. (``core.sshCommand`` would win over ``GIT_SSH``:
    the repository's, below, must not be read.)"""
    log = tmp_path / "ssh.log"
    folder = tmp_path / "ssh-bin"
    folder.mkdir()
    monkeypatch.setenv("GIT_SSH", str(fake_ssh(folder, log)))
    return log


@pytest.fixture
def setup(tmp_path: Path, path_without_gh: Path, ssh_log: Path) -> tuple[Path, Path, dict, Path]:
    """A project whose origin is a GitHub address for reading and a bare repository over ssh
    for pushing (``pushurl``), a thread's worktree with one commit, and a log every command of
    the project's config and hooks would append to."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = make_repo(tmp_path / "repo", {"app.py": "one\n"})
    git(repo, "remote", "add", "origin", WEB)
    git(repo, "config", "remote.origin.pushurl", f"ssh://git.example.invalid{bare}")
    git(repo, "push", "-q", str(bare), "main")
    worktree = worktrees.add(str(repo), f"feature-{THREAD}")
    work = Path(worktree["path"])
    (work / "feature.py").write_text("x = 1\n")
    git(work, "add", "feature.py")
    git(work, "commit", "-qm", "add the feature")
    ran = tmp_path / "ran.log"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-push", "reference-transaction", "post-update"):
        (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {ran}\n")
        (hooks / name).chmod(0o755)
    mark = f"\"sh -c 'echo $0 >> {ran}'; false\""
    with open(repo / ".git" / "config", "a") as config:
        config.write(
            f"[core]\n\thooksPath = {hooks}\n\tsshCommand = {mark}\n"
            f"[credential]\n\thelper = !{mark}\n"
            f'[remote "origin"]\n\treceivepack = {mark}\n'
        )
    return repo, bare, worktree, ran


def test_the_branch_is_pushed_and_without_gh_the_compare_link_is_given(
    setup: tuple, scratch: str, ssh_log: Path
) -> None:
    repo, bare, worktree, ran = setup
    tip = git(Path(worktree["path"]), "rev-parse", "HEAD").strip()
    plan = worktree_push.plan_push(worktree, scratch)
    assert plan.ok, plan.problems
    assert (plan.remote, plan.url, plan.target) == (
        "origin",
        f"ssh://git.example.invalid{bare}",
        "main",
    )
    assert plan.commit_count == 1
    result = worktree_push.push(plan, scratch, "Feature", "From a thread")
    assert result.ok and result.summary == "[new branch]" and not result.opened
    assert git(bare, "rev-parse", BRANCH).strip() == tip  # it landed
    assert result.link == f"https://github.com/acme/shop/compare/main...{BRANCH}?expand=1"
    assert git(repo, "rev-parse", f"refs/remotes/origin/{BRANCH}").strip() == tip
    # The user's ssh, asked for git's own receive-pack: not the repository's receivepack.
    assert ssh_log.read_text().endswith(f"git.example.invalid git-receive-pack '{bare}'\n")
    assert not ran.exists(), ran.read_text()  # no hook, ssh command or helper of the project
    assert os.listdir(scratch) == []


def test_a_push_the_remote_rejects_says_so(setup: tuple, scratch: str) -> None:
    repo, bare, worktree, _ = setup
    git(repo, "push", "-q", str(bare), f"main:refs/heads/{BRANCH}")
    other = make_repo(repo.parent / "other", {"x": "y\n"})
    git(other, "push", "-q", "--force", str(bare), f"main:refs/heads/{BRANCH}")  # unrelated
    result = worktree_push.push(worktree_push.plan_push(worktree, scratch), scratch, "t", "b")
    assert not result.ok and "rejected" in result.summary


def test_what_stops_a_push(setup: tuple, scratch: str) -> None:
    repo, _, worktree, _ = setup
    work = Path(worktree["path"])
    (work / "loose.txt").write_text("not committed\n")
    loose = worktree_push.plan_push(worktree, scratch).problem(UNCOMMITTED)
    assert loose is not None and loose.paths == ["?? loose.txt"]
    (work / "loose.txt").unlink()
    git(repo, "remote", "remove", "origin")
    assert worktree_push.plan_push(worktree, scratch).problem(REFUSED) is not None
    empty = worktrees.add(str(repo), f"empty-{THREAD}")
    git(repo, "remote", "add", "origin", WEB)
    assert worktree_push.plan_push(empty, scratch).problem(NOTHING) is not None


def fake_gh(bin_dir: Path, tmp_path: Path, logged_in: bool) -> Path:
    """A ``gh`` that records its arguments and where it ran, and answers as gh does."""
    calls = tmp_path / "gh-calls"
    (bin_dir / "gh").write_text(
        f'#!/bin/sh\necho "$(pwd) $*" >> {calls}\n'
        f'case "$1" in auth) exit {0 if logged_in else 1};; '
        "pr) echo https://github.com/acme/shop/pull/7;; esac\n"
    )
    (bin_dir / "gh").chmod(0o755)
    return calls


def test_gh_opens_the_pull_request_when_it_is_logged_in(
    setup: tuple, scratch: str, path_without_gh: Path, tmp_path: Path
) -> None:
    repo, _, worktree, _ = setup
    calls = fake_gh(path_without_gh, tmp_path, logged_in=True)
    plan = worktree_push.plan_push(worktree, scratch)
    result = worktree_push.push(plan, scratch, "Add the feature", "Commits:\n- add the feature")
    assert result.ok and result.opened and result.link == "https://github.com/acme/shop/pull/7"
    auth, create = calls.read_text().split("\n", 1)
    assert auth.endswith("auth status --hostname github.com")
    assert f"pr create --repo github.com/acme/shop --base main --head {BRANCH} " in create
    assert "--title Add the feature" in create
    assert not create.startswith(str(repo))  # never run in the repository


def test_gh_not_logged_in_leaves_the_compare_link(
    setup: tuple, scratch: str, path_without_gh: Path, tmp_path: Path
) -> None:
    _, _, worktree, _ = setup
    fake_gh(path_without_gh, tmp_path, logged_in=False)
    result = worktree_push.push(worktree_push.plan_push(worktree, scratch), scratch, "t", "b")
    assert result.ok and not result.opened and "gh is not logged in" in result.note
    assert result.link is not None and "/compare/main..." in result.link


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("git@github.com:acme/shop.git", "https://github.com/acme/shop/compare/main...f?expand=1"),
        ("https://github.com/acme/shop", "https://github.com/acme/shop/compare/main...f?expand=1"),
        (
            "ssh://git@ssh.github.com:443/acme/shop.git",
            "https://github.com/acme/shop/compare/main...f?expand=1",
        ),
        (
            "https://token@github.example.com/acme/shop.git",
            "https://github.example.com/acme/shop/compare/main...f?expand=1",
        ),
        (
            "git@gitlab.com:group/sub/shop.git",
            "https://gitlab.com/group/sub/shop/-/merge_requests/new?merge_request%5Bsource_branch%5D"
            "=f&merge_request%5Btarget_branch%5D=main",
        ),
        ("/srv/git/shop.git", None),
        ("file:///srv/git/shop.git", None),
        ("ext::sh -c evil", None),
        ("https://github.com/../../evil", None),
        ("https://bitbucket.org/acme/shop.git", None),
    ],
)
def test_compare_links_from_remote_addresses(url: str, link: str | None) -> None:
    assert worktree_push.compare_url(url, "main", "f") == link


def test_the_link_a_remote_offers_is_taken_only_as_a_plain_https_address() -> None:
    github = (
        "remote: \nremote: Create a pull request for 'f' on GitHub by visiting:\n"
        "remote:      https://github.com/acme/shop/pull/new/f\nremote: \n"
    )
    assert worktree_push.offered_link(github) == "https://github.com/acme/shop/pull/new/f"
    gitlab = (
        "remote: To create a merge request for f, visit:\nremote:   https://gitlab.com/g/"
        "s/-/merge_requests/new?merge_request%5Bsource_branch%5D=f\n"
    )
    assert worktree_push.offered_link(gitlab).startswith("https://gitlab.com/g/s/-/merge_requests")
    assert worktree_push.offered_link("remote: see https://evil.example/x\n") is None
    hostile = "remote: Create a pull request: javascript:alert(1) [x](https://evil.example/p)\n"
    assert worktree_push.offered_link(hostile) == "https://evil.example/p"  # the address alone
    assert worktree_push.offered_link("Create a pull request https://x.example/p\n") is None


@pytest.mark.parametrize(
    ("url", "how"),
    [
        ("/srv/shop.git", "file"),
        ("../shop.git", "file"),
        ("file:///srv/shop.git", "file"),
        ("./a:b", "file"),
        ("./mirror::app", "file"),
        ("github.com/acme/app.git", "file"),
        ("p/q:r", "file"),
        ("foo::bar", "helper"),
        ("a.b+c::d", "helper"),
        ("ext::sh -c x", "helper"),
        ("HTTPS://h/s", "helper"),
        ("git@host:shop.git", "ssh"),
        ("host:shop.git", "ssh"),
        ("ssh://host/shop.git", "ssh"),
        ("https://h/s", "https"),
        ("git://h/s", "git"),
    ],
)
def test_how_git_reaches_a_remote(url: str, how: str) -> None:
    """As git 2.39 does (measured: ``git ls-remote`` under ``GIT_TRACE``)."""
    assert worktree_push.transport(url) == how


def hostile_remote(path: Path, marker: Path) -> None:
    """A bare repository whose receive-pack would run commands of its own config: hooks, and
    ``core.alternateRefsCommand`` (run through the shell when it has an alternate), which no
    ``-c`` on the pushing side named."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "-q", "--bare", str(path))
    other = path.parent / f"{path.name}-alternate"
    git(path.parent, "init", "-q", "--bare", str(other))
    (path / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    git(path, "config", "core.alternateRefsCommand", f"echo alternateRefsCommand >> {marker}; :")
    for name in ("pre-receive", "update", "post-receive", "post-update"):
        (path / "hooks" / name).write_text(f"#!/bin/sh\necho hook {name} >> {marker}\n")
        (path / "hooks" / name).chmod(0o755)


@pytest.mark.parametrize(
    ("url", "pushurl"),
    [("{remote}", ""), ("./mirror::app", ""), (WEB, "github.com/acme/app.git"), (WEB, "{remote}")],
)
def test_a_remote_on_this_machine_is_refused_and_runs_nothing(
    setup: tuple, scratch: str, tmp_path: Path, url: str, pushurl: str
) -> None:
    repo, _, worktree, _ = setup
    marker = tmp_path / "marker"
    remote = tmp_path / "mirror.git"
    url, pushurl = url.format(remote=remote), pushurl.format(remote=remote)
    where = pushurl or url
    hostile_remote(remote if where == str(remote) else repo / where, marker)
    git(repo, "config", "remote.origin.url", url)
    git(repo, "config", "--unset", "remote.origin.pushurl")
    if pushurl:
        git(repo, "config", "remote.origin.pushurl", pushurl)
    plan = worktree_push.plan_push(worktree, scratch)
    refused = plan.problem(REFUSED)
    assert refused is not None and "push from the terminal" in refused.text, plan.problems
    assert f"pushes to `{where}`" in refused.text
    assert (f"its `url` is `{url}`" in refused.text) == bool(pushurl)  # both, when they differ
    plan.problems.clear()  # pushed anyway: still refused
    result = worktree_push.push(plan, scratch, "t", "b")
    assert not result.ok and "push from the terminal" in result.summary
    assert not marker.exists(), marker.read_text()
    assert "worktree-" not in git(remote if where == str(remote) else repo / where, "branch")
