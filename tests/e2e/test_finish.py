"""Issue 20 §3 from the phone: finishing a worktree thread — Finish… and /finish, merge after
Claude committed what it left uncommitted, a conflict refused with nothing changed, a push to
a folder of this machine refused, then one over ssh with the compare link (no gh here), a
discard that asks first.

Real CLI against the fake Messages API (its Bash tool writes and commits in the thread's
worktree), real hooks, real bot, the emulator's messages, clicks and slash commands, and a
repository whose config names a merge driver and hooks: none of them may run in the bot.
"""

from __future__ import annotations

import json
from pathlib import Path

from bridge.claude.screen import is_busy
from bridge_testkit import wait_until
from bridge_testkit.gitrepo import fake_ssh, git
from fake_anthropic import last_user_text, text, tool_use

APP = "one\ntwo\nthree\nfour\nfive\n"
HOOKS = (
    "post-checkout",
    "post-merge",
    "pre-merge-commit",
    "reference-transaction",
    "post-index-change",
    "pre-push",
    "pre-receive",
    "post-receive",
)


def project(rig) -> Path:
    """project-a as a repository whose threads get worktrees (Claude may run Bash there)."""
    repo = rig.projects["project-a"]
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Owner")
    git(repo, "config", "user.email", "owner@example.invalid")
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "start")
    raw = rig.config()
    raw["servers"][0]["projects"][0]["thread"] = {
        "isolation": "worktree",
        "permission": "bypassPermissions",
    }
    raw["servers"][0]["projects"][0]["progress"] = False
    rig.write_config(raw)
    return repo


def hostile(rig, repo: Path, *hooks_dirs: Path) -> Path:
    """A merge driver for every file (by attribute and by ``merge.default``) and hooks, each
    recording the processes that ran it. Returns the markers' folder."""
    markers = rig.tmp.parent / f"{rig.tmp.name}-markers"
    markers.mkdir()
    (markers / "mark.sh").write_text(
        'p=$$; while [ "$p" -gt 1 ]; do tr "\\0" " " < /proc/$p/cmdline; echo;'
        ' p=$(cut -d" " -f4 /proc/$p/stat); done >> "$(dirname "$0")/$1"\n'
    )
    hooks = markers / "repo-hooks"  # (not "hooks": the bridge's own are told by that)
    for folder in (hooks, *hooks_dirs):
        folder.mkdir(exist_ok=True)
        for name in HOOKS:
            (folder / name).write_text(f"#!/bin/sh\nsh {markers}/mark.sh {name}\nexit 0\n")
            (folder / name).chmod(0o755)
    with open(repo / ".git" / "config", "a") as config:
        config.write(
            f"[core]\n\thooksPath = {hooks}\n[merge]\n\tdefault = evil\n"
            f'[merge "evil"]\n\tdriver = sh {markers}/mark.sh merge-driver; false\n'
        )
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* merge=evil\n")
    return markers


def ran_by_bridge(markers: Path) -> dict[str, str]:
    """The repository's commands the bot or a hook of the bridge ran (Claude's own `git
    commit` runs the repository's hooks: not ours)."""
    chains = {p.name: p.read_text() for p in markers.iterdir() if p.is_file() and p.suffix != ".sh"}
    return {k: v for k, v in chains.items() if "/hooks/" in v or "bridge.cli" in v}


def buttons(message: dict) -> dict[str, str]:
    """label → custom_id of a message's buttons."""
    return {c["label"]: c["custom_id"] for row in message["components"] for c in row["components"]}


def click(rig, message: dict, label: str, contains: str, user: str = "alice") -> dict:
    """Click a button of the Finish message; the message once edited to say ``contains``."""
    since = rig.discord.mark()
    result = rig.discord.click(message["id"], buttons(message)[label], user=user)
    assert result["response_type"] == 6, result  # acknowledged; the message is edited after
    return rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=message["id"],
        content_contains=contains,
        timeout=60,
    )["message"]


def open_finish(rig, message: dict) -> dict:
    """Finish… on the thread's worktree note: the Finish message it posts."""
    since = rig.discord.mark()
    result = rig.discord.click(message["id"], buttons(message)["Finish…"])
    assert result["response_type"] == 5 and not result["ephemeral"], result
    return rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )["message"]


def archived(rig, thread_id: str) -> bool:
    """The bot archived the thread (its REST update, as the gateway announced it)."""
    updates = rig.discord.records(kind="thread_update")
    return any(
        r["channel_id"] == thread_id
        and r["source"] == "rest"
        and r["thread"]["thread_metadata"]["archived"]
        for r in updates
    )


def idle(rig, thread_id: str) -> None:
    """Wait until the thread's turn has ended on screen (its reply may come a moment before)."""
    pane = rig.tmux.find(thread_id).pane_id
    wait_until(lambda: not is_busy(rig.tmux.capture(pane)), 30, "the thread's turn to end")


def thread_with_work(rig, repo: Path, name: str, work_turns: list) -> tuple[dict, Path, dict]:
    """A thread whose first message runs ``work_turns(worktree path)``; its worktree note."""
    thread = rig.discord.create_thread(rig.ids["project-a"], name)
    work = repo / ".claude" / "worktrees" / name.lower()
    rig.api.script(*work_turns(work))
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "do the work")
    note = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        content_contains="works in its own git worktree",
        timeout=90,
    )
    rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        content_contains="done with the work",
        timeout=90,
    )
    idle(rig, thread["id"])
    return thread, work, note["message"]


def test_a_thread_is_merged_after_claude_commits_what_it_left_uncommitted(rig) -> None:
    repo = project(rig)
    markers = hostile(rig, repo)
    rig.start_bot()
    edit = f"printf '{APP.replace('five', 'FIVE')}' > app.py && echo feature > feature.txt"
    thread, work, note = thread_with_work(
        rig,
        repo,
        "Feature",
        lambda work: [
            tool_use("Bash", {"command": f"cd {work} && {edit}", "description": "Write"}),
            text("done with the work"),
            tool_use(
                "Bash",
                {
                    "command": f"cd {work} && git add -A && git commit -qm 'Add the feature'",
                    "description": "Commit",
                },
            ),
            text("committed it"),
        ],
    )
    assert "branch `worktree-feature` from" in note["content"] and "from `main`" in note["content"]
    (repo / "app.py").write_text(APP.replace("one", "ONE"))
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "main moves on")
    main_before = git(repo, "rev-parse", "main").strip()

    menu = open_finish(rig, note)
    assert set(buttons(menu)) == {"Merge into main", "Push and open PR", "Keep", "Discard"}
    # Uncommitted work is not merged: the step stops, names it, offers to ask Claude.
    menu = click(rig, menu, "Merge into main", "Not merged")
    assert "2 uncommitted change(s)" in menu["content"] and "?? feature.txt" in menu["content"]
    assert git(repo, "rev-parse", "main").strip() == main_before
    since = rig.discord.mark()  # before the click: the reply may be posted before the wait
    menu = click(rig, menu, "Ask Claude to commit", "Asked Claude")
    assert "commit all the work in this worktree" in last_user_text(rig.api.wait_requests(3)[2])
    reply = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        content_contains="committed it",
        timeout=90,
    )
    # Once that turn ends with the worktree clean, the Finish buttons come again by themselves.
    offered = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        content_contains="Finish this thread's work",
        timeout=90,
    )
    menu = offered["message"]
    assert menu["content"].startswith(
        "✅ Claude's turn ended with everything in the worktree committed."
    ), menu["content"]
    assert "1 commit(s) not in `main`" in menu["content"], menu["content"]
    assert int(menu["id"]) > int(reply["message"]["id"])  # below Claude's reply
    assert set(buttons(menu)) == {"Merge into main", "Push and open PR", "Keep", "Discard"}
    idle(rig, thread["id"])

    menu = click(rig, menu, "Merge into main", "Merge `worktree-feature` into")
    shown = menu["content"]
    assert "(a merge commit)" in shown and "Add the feature" in shown, shown
    assert "📝 2 files changed, +2 −1" in shown, shown
    refused = rig.discord.click(menu["id"], buttons(menu)["Merge"], user="bob")
    assert refused["ephemeral"] and git(repo, "rev-parse", "main").strip() == main_before
    menu = click(rig, menu, "Merge", "Merged")
    assert (
        "merge commit" in menu["content"] and "the project's checkout is updated" in menu["content"]
    )
    parents = git(repo, "log", "-1", "--format=%P", "main").split()
    assert parents[0] == main_before and len(parents) == 2
    assert (repo / "app.py").read_text() == APP.replace("one", "ONE").replace("five", "FIVE")
    assert (repo / "feature.txt").read_text() == "feature\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""

    menu = click(rig, menu, "Remove worktree and end thread", "Done")
    assert not work.exists() and "worktree-feature" not in git(repo, "branch", "--list")
    wait_until(lambda: rig.tmux.find(thread["id"]) is None, 30, "the thread's session to end")
    assert archived(rig, thread["id"])
    assert ran_by_bridge(markers) == {}  # no driver or hook of the repository ran in the bot


def test_a_conflict_is_refused_the_branch_is_pushed_and_discard_asks_first(rig) -> None:
    repo = project(rig)
    bare = rig.tmp / "remote.git"  # the server's, reached over (a stand-in for) ssh
    git(rig.tmp, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", "git@github.com:acme/shop.git")
    # First a pushurl that reads like GitHub's address and is a folder of the project: a
    # repository whose receive-pack would run its hooks and its alternateRefsCommand here.
    folder = repo / "github.com" / "acme" / "shop.git"
    folder.parent.mkdir(parents=True)
    git(folder.parent, "init", "-q", "--bare", str(folder))
    (folder / "objects" / "info" / "alternates").write_text(f"{bare / 'objects'}\n")
    git(repo, "config", "remote.origin.pushurl", "github.com/acme/shop.git")
    git(repo, "push", "-q", str(bare), "main")
    markers = hostile(rig, repo, folder / "hooks")
    git(folder, "config", "core.alternateRefsCommand", f"sh {markers}/mark.sh alternate-refs")
    ssh = fake_ssh(rig.tmp, rig.tmp / "ssh.log")
    rig.start_bot(env={"GIT_SSH": str(ssh)})
    change = (
        f"printf '{APP.replace('two', 'THREAD')}' > app.py && git add -A && git commit "
        "-qm 'Thread edit'"
    )
    thread, work, _ = thread_with_work(
        rig,
        repo,
        "Fix",
        lambda work: [
            tool_use("Bash", {"command": f"cd {work} && {change}", "description": "Edit"}),
            text("done with the work"),
        ],
    )
    (repo / "app.py").write_text(APP.replace("two", "MAIN"))
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "main edits the same line")
    main_before = git(repo, "rev-parse", "main").strip()

    since = rig.discord.mark()
    result = rig.discord.run_command(thread["id"], "finish")
    menu = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )["message"]
    menu = click(rig, menu, "Merge into main", "Not merged")
    assert "would conflict in 1 file(s)" in menu["content"] and "`app.py`" in menu["content"]
    assert "Nothing was changed." in menu["content"]
    assert "Ask Claude to merge main in" in buttons(menu)
    assert git(repo, "rev-parse", "main").strip() == main_before
    assert (repo / "app.py").read_text() == APP.replace("two", "MAIN")

    menu = click(rig, menu, "Back", "Finish this thread's work")
    menu = click(rig, menu, "Push and open PR", "Not pushed")
    assert (
        "pushes to `github.com/acme/shop.git` (its `pushurl`; its `url` is "
        "`git@github.com:acme/shop.git`): a folder on this machine"
    ) in menu["content"]
    assert "push from the terminal" in menu["content"], menu["content"]
    assert git(folder, "branch", "--list").strip() == ""
    pushurl = f"ssh://git.example.invalid{bare}"
    git(repo, "config", "remote.origin.pushurl", pushurl)
    menu = click(rig, menu, "Back", "Finish this thread's work")
    menu = click(rig, menu, "Push and open PR", "Push `worktree-fix` to")
    assert (
        f"Push to: `{pushurl}` (with your git's credentials), its `pushurl`; its `url` is "
        "`git@github.com:acme/shop.git`"
    ) in menu["content"], menu["content"]
    assert "1 commit(s)" in menu["content"]
    # The branch moves after the preview: the confirmation shows the new state, pushes nothing.
    (work / "more.txt").write_text("more\n")
    git(work, "add", "more.txt")
    git(work, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "One more")
    menu = click(rig, menu, "Push", "Something changed since the preview")
    assert "2 commit(s)" in menu["content"] and "One more" in menu["content"]
    assert git(bare, "branch", "--list").strip() == "main"
    menu = click(rig, menu, "Push", "Pushed")
    tip = git(work, "rev-parse", "HEAD").strip()
    branch = "worktree-fix"
    assert git(bare, "rev-parse", branch).strip() == tip  # it landed
    link = f"https://github.com/acme/shop/compare/main...{branch}?expand=1"
    assert f"Open the pull request: {link}" in menu["content"], menu["content"]

    (work / "notes.txt").write_text("unsaved thoughts\n")
    menu = click(rig, menu, "Back", "Finish this thread's work")
    menu = click(rig, menu, "Discard", "Discard this thread's work?")
    assert "It would lose:" in menu["content"] and "?? notes.txt" in menu["content"]
    assert f"2 commit(s) on `{branch}` in no other branch" in menu["content"]
    assert work.exists() and rig.tmux.find(thread["id"]) is not None  # only asked
    menu = click(rig, menu, "Discard", "Discarded")
    assert not work.exists() and branch not in git(repo, "branch", "--list")
    wait_until(lambda: rig.tmux.find(thread["id"]) is None, 30, "the thread's session to end")
    saved = json.loads((rig.state_dir / "state" / f"{thread['id']}.json").read_text())
    assert saved.get("worktree") is None and archived(rig, thread["id"])
    assert ran_by_bridge(markers) == {}


def test_the_prompt_to_merge_a_branch_named_with_shell_characters_quotes_the_name(rig) -> None:
    """A refname may hold ``;|$()``: "Ask Claude to merge <base> in" types it shell-quoted,
    as data, into the command Claude is asked to run."""
    repo = project(rig)
    base = "release;$(touch${IFS}pwned)|x"
    git(repo, "branch", "-m", base)
    rig.start_bot()
    change = (
        f"printf '{APP.replace('two', 'THREAD')}' > app.py && git add -A && git commit "
        "-qm 'Thread edit'"
    )
    _, _, note = thread_with_work(
        rig,
        repo,
        "Clash",
        lambda work: [
            tool_use("Bash", {"command": f"cd {work} && {change}", "description": "Edit"}),
            text("done with the work"),
            text("will merge it"),
        ],
    )
    (repo / "app.py").write_text(APP.replace("two", "MAIN"))
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "the project edits the line")
    menu = open_finish(rig, note)
    menu = click(rig, menu, f"Merge into {base}", "Not merged")
    assert "would conflict in 1 file(s)" in menu["content"]
    menu = click(rig, menu, f"Ask Claude to merge {base} in", "Asked Claude")
    assert f"Asked Claude to merge `{base}` in" in menu["content"], menu["content"]
    typed = last_user_text(rig.api.wait_requests(3)[2])
    assert "git merge 'release;$(touch${IFS}pwned)|x' — then resolve" in typed, typed
