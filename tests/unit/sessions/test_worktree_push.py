"""Pushing a worktree thread's branch with real git to a local bare remote: the push lands,
no command of the repository or of the receiving one runs, and the pull request is opened by
gh or offered as the remote's link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.sessions import worktree_push, worktrees
from bridge.sessions.worktree_finish import NOTHING, REFUSED, UNCOMMITTED
from bridge_testkit.gitrepo import git, make_repo

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
def setup(tmp_path: Path, path_without_gh: Path) -> tuple[Path, Path, dict, Path]:
    """A project whose origin is a GitHub address for reading and a local bare repository for
    pushing (``pushurl``), a thread's worktree with one commit, and a log every command of the
    project's config and hooks, and of the bare repository's hooks, would append to."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = make_repo(tmp_path / "repo", {"app.py": "one\n"})
    git(repo, "remote", "add", "origin", WEB)
    git(repo, "config", "remote.origin.pushurl", str(bare))
    git(repo, "push", "-q", str(bare), "main")
    worktree = worktrees.add(str(repo), f"feature-{THREAD}")
    work = Path(worktree["path"])
    (work / "feature.py").write_text("x = 1\n")
    git(work, "add", "feature.py")
    git(work, "commit", "-qm", "add the feature")
    ran = tmp_path / "ran.log"
    for hooks in (tmp_path / "hooks", bare / "hooks"):
        hooks.mkdir(exist_ok=True)
        for name in ("pre-push", "pre-receive", "update", "post-receive", "post-update",
                     "reference-transaction", "proc-receive", "push-to-checkout"):  # fmt: skip
            (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {ran}\n")
            (hooks / name).chmod(0o755)
    mark = f"\"sh -c 'echo $0 >> {ran}'; false\""
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\thooksPath = {tmp_path / 'hooks'}\n\tsshCommand = {mark}\n"
                     f"[credential]\n\thelper = !{mark}\n"
                     f"[remote \"origin\"]\n\treceivepack = {mark}\n")  # fmt: skip
    return repo, bare, worktree, ran


def test_the_branch_is_pushed_and_without_gh_the_compare_link_is_given(
    setup: tuple, scratch: str
) -> None:
    repo, bare, worktree, ran = setup
    tip = git(Path(worktree["path"]), "rev-parse", "HEAD").strip()
    plan = worktree_push.plan_push(worktree, scratch)
    assert plan.ok, plan.problems
    assert (plan.remote, plan.url, plan.target) == ("origin", str(bare), "main")
    assert plan.commit_count == 1
    result = worktree_push.push(plan, scratch, "Feature", "From a thread")
    assert result.ok and result.summary == "[new branch]" and not result.opened
    assert git(bare, "rev-parse", BRANCH).strip() == tip  # it landed
    assert result.link == f"https://github.com/acme/shop/compare/main...{BRANCH}?expand=1"
    assert git(repo, "rev-parse", f"refs/remotes/origin/{BRANCH}").strip() == tip
    assert not ran.exists(), ran.read_text()  # no hook, ssh command or helper of either side
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
        ("ssh://git@ssh.github.com:443/acme/shop.git",
         "https://github.com/acme/shop/compare/main...f?expand=1"),
        ("https://token@github.example.com/acme/shop.git",
         "https://github.example.com/acme/shop/compare/main...f?expand=1"),
        ("git@gitlab.com:group/sub/shop.git",
         "https://gitlab.com/group/sub/shop/-/merge_requests/new?merge_request%5Bsource_branch%5D"
         "=f&merge_request%5Btarget_branch%5D=main"),
        ("/srv/git/shop.git", None),
        ("file:///srv/git/shop.git", None),
        ("ext::sh -c evil", None),
        ("https://github.com/../../evil", None),
        ("https://bitbucket.org/acme/shop.git", None),
    ],
)  # fmt: skip
def test_compare_links_from_remote_addresses(url: str, link: str | None) -> None:
    assert worktree_push.compare_url(url, "main", "f") == link


def test_the_link_a_remote_offers_is_taken_only_as_a_plain_https_address() -> None:
    github = ("remote: \nremote: Create a pull request for 'f' on GitHub by visiting:\n"
              "remote:      https://github.com/acme/shop/pull/new/f\nremote: \n")  # fmt: skip
    assert worktree_push.offered_link(github) == "https://github.com/acme/shop/pull/new/f"
    gitlab = ("remote: To create a merge request for f, visit:\nremote:   https://gitlab.com/g/"
              "s/-/merge_requests/new?merge_request%5Bsource_branch%5D=f\n")  # fmt: skip
    assert worktree_push.offered_link(gitlab).startswith("https://gitlab.com/g/s/-/merge_requests")
    assert worktree_push.offered_link("remote: see https://evil.example/x\n") is None
    hostile = "remote: Create a pull request: javascript:alert(1) [x](https://evil.example/p)\n"
    assert worktree_push.offered_link(hostile) == "https://evil.example/p"  # the address alone
    assert worktree_push.offered_link("Create a pull request https://x.example/p\n") is None


@pytest.mark.parametrize(
    ("url", "local"),
    [("/srv/shop.git", True), ("../shop.git", True), ("file:///srv/shop.git", True),
     ("git@host:shop.git", False), ("ssh://host/shop.git", False), ("https://h/s", False),
     ("./a:b", True), ("foo::bar", False)],
)  # fmt: skip
def test_which_remotes_are_on_this_machine(url: str, local: bool) -> None:
    assert worktree_push.is_local(url) is local
