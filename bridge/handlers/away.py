"""The hooks' part of "while you are away": a usage limit noted, a spend budget enforced.

* StopFailure ``rate_limit`` (:func:`on_usage_limit`): the session waits for a limit's reset.
  ``away/limit-<key>.json`` says so, with the reset time when Claude Code gave one; the bot
  posts "⏸ Usage limit" and types the continue prompt at the reset (``bot/away/watch.py``).
* UserPromptSubmit (:func:`on_prompt`): a prompt reached the session (the owner's, the
  bridge's continue, or Claude Code's own at the reset), so the wait is over.
* PreToolUse (:func:`check_budget`): past a cap, the call is denied and the turn stopped
  (``continue: false``): the tool does not run, no Stop follows (2.1.332, measured). The bot
  asks the owner **Continue (+$N)** / **Stop**.

What 2.1.332 shows at a usage limit (measured against the fake API with a subscriber login):
the turn ends with "You've hit your 5-hour limit · resets 2:46pm (UTC)" (StopFailure
``error: "rate_limit"``, that line as ``last_assistant_message``); the statusLine gets
``rate_limits.five_hour`` at ``used_percentage: 100`` with ``resets_at``; the input box stays,
with "Continuing automatically at 2:46pm · Esc to cancel" under it.
"""

from __future__ import annotations

import time

from bridge.handlers import progress
from bridge.handlers.context import HookContext
from bridge.state import away, status_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bridge.state.runtime import Runtime

LIMIT_WINDOWS = ("five_hour", "seven_day")
# "resets 2:46pm (UTC)", "resets 1:51pm", "resets Nov 27, 9am (UTC)": the CLI's own line
RESETS = r"resets (?:[A-Z][a-z]{2} \d{1,2}, )?(\d{1,2})(?::(\d{2}))?\s*([ap]m)"


def on_usage_limit(context: HookContext, said: str) -> None:
    """A turn ended at a usage (or rate) limit: note the wait for the bot."""
    session = context.event.get("session_id")
    reset = reset_time(context.runtime, session, said)
    note_limit(context.runtime, context.server.name, context.channel_id, session, said, reset)


def note_limit(
    rt: Runtime,
    server: str,
    key: str,
    session: object,
    said: str,
    reset: tuple[float | None, str, bool],
) -> None:
    """Channel ``key``'s session waits for a limit's reset (``reset``: when, its window,
    whether exact): the record the bot acts on. Codex's limit, read off its screen by the
    bot (``bot/turn/limit_on_screen.py``), is noted here too."""
    resets_at, window, exact = reset
    record = {
        "server": server,
        "key": key,
        "session": session if status_cache.is_safe_session_id(session) else None,
        "said": " ".join(said.split())[:300],
        "hit_at": time.time(),
        "resets_at": resets_at,
        "exact": exact,
        "window": window,
        "state": "waiting",
    }
    before = away.load(rt.ensure(), "limit", key) or {}
    # hit again while waiting, or after a try at a reset nobody gave: the same message
    if before.get("message_id") and before.get("state") in ("waiting", "trying"):
        record["message_id"] = before["message_id"]
        record["tries"] = int(before.get("tries") or 0) + 1
    away.save(rt, "limit", key, record)


def reset_time(rt: Runtime, session: object, said: str) -> tuple[float | None, str, bool]:
    """When the limit resets, its window, and whether that is exact: the statusLine's
    ``resets_at`` of the window at 100 % (to the second), else the end of the minute the
    CLI's line names (it shows the reset rounded down: 14:55:55 is "2:55pm"), else None."""
    record = status_cache.read_status(rt, session) or {}
    used = record.get("rate_limits")
    used = used if isinstance(used, dict) else {}
    resets = record.get("rate_limit_resets")
    resets = resets if isinstance(resets, dict) else {}
    now = time.time()
    for window in sorted(resets, key=lambda w: -float(used.get(w) or 0)):
        value, at_limit = resets[window], float(used.get(window) or 0) >= 100
        if isinstance(value, int | float) and value > now - 60 and at_limit:
            return float(value), str(window), True
    window = "seven_day" if "weekly" in said.lower() or "7-day" in said else "five_hour"
    return parse_reset(said, now), window, False


def parse_reset(said: str, now: float) -> float | None:
    """The next local time the CLI's "resets 2:46pm" names (None if it names none)."""
    import re  # only here: UserPromptSubmit and PreToolUse import this module too

    found = re.search(RESETS, said, re.IGNORECASE)
    if not found:
        return None
    hour = int(found.group(1)) % 12 + (12 if found.group(3).lower() == "pm" else 0)
    minute = int(found.group(2) or 0)
    local = time.localtime(now)
    at = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, hour, minute, 0, 0, 0, -1))
    while at <= now - 60:
        at += 86400
    return at + 60  # the minute shown has begun; the reset may be anywhere in it


def on_prompt(context: HookContext) -> None:
    """A prompt reached the session: a limit wait of its channel is over, and so is a stop
    at the spend budget the owner chose (its queued prompts may follow this turn)."""
    key = context.channel_id
    rt = context.runtime
    budget = away.load(rt, "budget", key)  # (one failed open when there is none)
    if budget is not None and budget.get("state") == "stopped":
        away.remove(rt, "budget", key)
    if not away.exists(rt, "limit", key):
        return
    record = away.load(rt, "limit", key) or {}
    if record.get("state") in ("waiting", "now"):
        prompt = " ".join(str(context.event.get("prompt") or "").split())[:120]
        away.update(rt, "limit", key, state="ended", ended_at=time.time(), ended_by=prompt)


def check_budget(context: HookContext) -> dict | None:
    """Deny the tool call and stop the turn once a cap of the session's budget is reached."""
    budget = context.project.budget
    if not budget.any:
        return None
    from bridge.state.budget import NAMES, Spend

    rt = context.runtime
    spend = Spend(rt, budget, context.event.get("session_id"))
    over = spend.over()
    if not over:
        return None
    which, spent, cap = over[0]
    key = context.channel_id
    if not away.exists(rt, "budget", key):
        rt.ensure()
        away.save(
            rt,
            "budget",
            key,
            {
                "server": context.server.name,
                "key": key,
                "session": spend.session_id,
                "which": which,
                "spent": spent,
                "cap": cap,
                "day": spend.day,
                "at": time.time(),
                "tool": str(context.event.get("tool_name") or "")[:80],
            },
        )
    reason = f"{NAMES[which]} is reached (${spent:.2f} of ${cap:.2f})"
    progress.record(context, "failed", error="budget", details=reason)
    return {
        "continue": False,
        "stopReason": f"discord-bridge: {reason}; the owner decides on Discord.",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": (
                f"discord-bridge: {reason}. Stop here; the owner will say whether to go on."
            ),
        },
    }
