"""What the Finish message shows (``bot/changes/finish.py``): its screens' text, built from git's
answers.

No step runs here: the commits, files and problems a plan found, the push's target and
result, what a discard would lose, each as the lines of the message.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import discord

from bridge.bot.control.threads import code
from bridge.sessions import worktree_finish, worktree_plan, worktree_push, worktrees
from bridge.sessions.changes import GitError
from bridge.sessions.tree_diff import FileChange, summary
from bridge.sessions.worktree_plan import Plan

NO_MENTIONS = discord.AllowedMentions.none()
LIST_MAX = 10  # commits, files or paths listed per kind


@dataclass
class Screen:
    """What the Finish message shows: its text and its buttons."""

    text: str
    buttons: list[discord.ui.Item] = field(default_factory=list)

    def view(self) -> discord.ui.View:
        view = discord.ui.View(timeout=None)
        for button in self.buttons:
            view.add_item(button)
        return view

    def content(self) -> str:
        return self.text if len(self.text) <= 1990 else self.text[:1989] + "…"


def problem_lines(verb: str, plan: Plan) -> list[str]:
    """Why a step was refused: each problem, with the paths it names."""
    lines = [f"✋ **{verb}:**"]
    for problem in plan.problems:
        lines.append(f"- {problem.text}" + (":" if problem.paths else "."))
        lines += [f"  - `{code(path)}`" for path in problem.paths[:LIST_MAX]]
        lines += [f"  - … and {len(problem.paths) - LIST_MAX} more"] * (
            len(problem.paths) > LIST_MAX
        )
    return [*lines, "Nothing was changed."]


def merge_preview_lines(plan: worktree_finish.MergePlan) -> list[str]:
    """What a merge would do: fast-forward or merge commit, its commits and files."""
    kind = "a fast-forward" if plan.fast_forward else "a merge commit"
    return [
        f"🔀 **Merge `{code(plan.worktree['branch'])}` into `{code(plan.base)}`?** ({kind})",
        *commit_lines(plan.commits, plan.commit_count),
        summary(plan.files) + ":",
        *[f"- `{file_line(f)}`" for f in plan.files[:LIST_MAX]],
        *more(len(plan.files)),
    ]


def merged_text(plan: worktree_finish.MergePlan, result: worktree_finish.MergeResult) -> str:
    """What a merge did, and the question that follows it."""
    how = "fast-forward to" if result.fast_forward else "merge commit"
    return (
        f"✅ Merged `{code(plan.worktree['branch'])}` into `{code(plan.base)}` ({how} "
        f"`{result.commit[:7]}`): {summary(plan.files)}; the project's checkout is "
        "updated.\nRemove the worktree and end this thread now?"
    )


def push_preview_lines(plan: worktree_push.PushPlan, then: str) -> list[str]:
    """Where the branch would go, with what; ``then``: what happens after the push."""
    also = ""  # the remote's other address, when it pushes elsewhere than it reads
    if plan.web_url and plan.web_url != plan.url:
        also = f", its `pushurl`; its `url` is `{code(plan.web_url)}`"
    return [
        f"⬆️ **Push `{code(plan.branch)}` to `{code(plan.remote)}` and open a pull request "
        f"into `{code(plan.target)}`?**",
        f"Push to: `{code(plan.url)}` (with your git's credentials){also}",
        *commit_lines(plan.commits, plan.commit_count),
        f"Then {then}.",
    ]


def pushed_lines(plan: worktree_push.PushPlan, result: worktree_push.PushResult) -> list[str]:
    """What a push did: refused, or pushed and the pull request's address."""
    where = f"`{code(plan.branch)}` to `{code(plan.remote)}`"
    if not result.ok:
        return [f"⚠️ Not pushed {where}: {code(result.summary)}"]
    lines = [f"✅ Pushed {where} ({code(result.summary)})."]
    if result.opened:
        lines.append(f"Pull request: {result.link}")
    elif result.link:
        lines.append(f"Open the pull request: {result.link}")
    else:
        lines.append("This remote gives no pull request address: open one on its site.")
    if result.note:
        lines.append(f"-# {code(result.note)}")
    return lines


def pull_request_text(thread_name: str, plan: worktree_push.PushPlan) -> tuple[str, str]:
    """The pull request's title (the thread's name, else the first commit's subject) and
    body (where it came from, its commits)."""
    first = plan.commits[-1].split(" ", 1)[-1] if plan.commits else plan.branch
    body = "\n".join(
        [
            f"From the Discord thread “{thread_name}” (discord-bridge)." if thread_name else "",
            "",
            "Commits:",
            *[f"- {line}" for line in plan.commits],
        ]
    ).strip()
    return (thread_name or first)[:200], body


def commit_lines(commits: list[str], count: int) -> list[str]:
    lines = [f"{count} commit(s):"]
    lines += [f"- `{code(line)}`" for line in commits[:LIST_MAX]]
    return lines + more(count)


def more(count: int) -> list[str]:
    return [f"- … and {count - LIST_MAX} more"] if count > LIST_MAX else []


def file_line(change: FileChange) -> str:
    counts = "binary" if change.added is None else f"+{change.added} −{change.removed}"
    return code(f"{counts}  {change.path}")


def base_and_ahead(worktree: dict) -> tuple[str, int]:
    """The project's branch and how many commits the thread's branch has that it lacks."""
    base = worktree_plan.base_branch(worktree["repo"])
    try:
        _, count = worktree_plan.commits_between(
            worktree["repo"], f"refs/heads/{base}" if base else "HEAD", worktree["branch"]
        )
    except GitError:
        count = 0
    return base, count


def loss_print(loss: worktrees.Loss) -> str:
    """12 hex digits naming what a discard showed would be lost."""
    parts = ["U", *loss.uncommitted, "C", *loss.unmerged, "I", *loss.ignored]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]
