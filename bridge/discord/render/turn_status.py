"""A turn's status message: the turn events folded into what it shows, and its text.

Events (``kind``, appended by the hooks to ``progress/<channel>.jsonl``): ``turn``
(UserPromptSubmit), ``text`` (MessageDisplay delta), ``tool`` (PreToolUse), ``tool_done``
(PostToolUse / PostToolUseFailure), ``done`` (Stop, after the reply was posted), ``failed``
(StopFailure: an API error ended the turn, no Stop comes).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from typing import TypeGuard

TEXT_SHOWN = 400  # characters of the streaming text kept in the status message


class TurnProgress:
    """One turn of one session as the status message shows it."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.tools = 0
        self.tool: tuple[str, str, float] | None = None  # name, summary, since: the latest
        self.tool_running = False
        self.text = ""
        self.message_id: str | None = None  # of the streaming assistant message
        self.from_display = False  # MessageDisplay seen: no need for the transcript
        self.transcript: str | None = None
        self.ended: float | None = None
        self.outcome = ""  # "", "done", "interrupted", "failed"
        self.error = ""  # what StopFailure reported
        self.interrupted_by: str | None = None
        self.waiting = False  # a Discord prompt of this session is open
        self.session: str | None = None  # Claude's session id (the statusLine cache's key)
        self.cost0: float | None = None  # the session's cost when the turn started (None:
        # the turn's start was not seen, so neither is what it cost)
        self.cost: float | None = None  # what the turn cost, once the statusLine said
        self.changes: dict | None = None  # what the turn changed in git (Stop hook)
        self.task: str | None = None  # a background task's report started it, not the owner

    def apply(self, event: dict) -> None:
        kind = event.get("kind")
        if event.get("transcript"):
            self.transcript = str(event["transcript"])
        if isinstance(event.get("session"), str) and self.session is None:
            self.session = event["session"]
        if kind == "turn" and self.cost0 is None:  # no figure yet: the session's first turn
            self.cost0 = float(event["cost0"]) if _is_number(event.get("cost0")) else 0.0
        if kind == "turn" and isinstance(event.get("task"), str) and self.tools == 0:
            self.task = event["task"]
        if kind == "done" and isinstance(event.get("changes"), dict):
            self.changes = event["changes"]
        if kind == "text":
            self._add_text(event)
        elif kind == "tool":
            self.tools += 1
            self.tool = (str(event.get("name")), str(event.get("summary") or ""), event["t"])
            self.tool_running = True
        elif kind == "tool_done":
            self.tool_running = False
        elif kind == "done":
            self.finish("done", event["t"])
        elif kind == "failed" and not self.outcome:
            details = " ".join(str(event.get("details") or "").split())[:200]
            self.error = str(event.get("error") or "unknown") + (f": {details}" if details else "")
            self.finish("failed", event["t"])

    def _add_text(self, event: dict) -> None:
        self.from_display = True
        if event.get("message_id") != self.message_id:
            self.message_id = event.get("message_id")
            self.text = ""
        self.text = (self.text + str(event.get("delta") or ""))[-4 * TEXT_SHOWN :]

    def show_transcript_text(self, text: str) -> bool:
        """Text read from the transcript before a tool call (no MessageDisplay): shown with
        🔄 unless it is what is already shown. True if it changed the message."""
        text = text.strip()
        if not text or self.from_display or self.text == "🔄 " + text:
            return False
        self.text = "🔄 " + text
        return True

    def finish(self, outcome: str, when: float, by: str | None = None) -> None:
        if self.outcome:
            return
        self.outcome, self.ended, self.interrupted_by = outcome, when, by
        self.tool_running = False

    def render(self, now: float) -> str:
        tools = f"{self.tools} tool{'s' if self.tools != 1 else ''}"
        took = _seconds((self.ended or self.started) - self.started)  # finish() set both
        if self.outcome == "done":
            cost = f" · ${self.cost:.2f}" if self.cost is not None else ""
            done = f"✅ Done in {took} · {tools}{cost}"
            summary = str((self.changes or {}).get("summary") or "")
            return f"{done}\n{summary}" if summary.startswith("📝") else done
        if self.outcome == "interrupted":
            by = f" by <@{self.interrupted_by}>" if self.interrupted_by else ""
            return f"⏹ Interrupted{by} after {took} · {tools}"
        if self.outcome == "failed" and self.error.startswith("budget: "):  # handlers/away.py
            reason = self.error.removeprefix("budget: ").replace("`", "'")
            return f"🛑 Stopped at the spend budget ({reason}) after {took} · {tools}"
        if self.outcome == "failed" and self.error.partition(":")[0] == "rate_limit":
            # the bot's "⏸ Usage limit" message (bot/away/watch.py) says when and offers Resume
            return f"⏸ Stopped at a usage limit after {took} · {tools}"
        if self.outcome == "failed":
            error = self.error.replace("`", "'")
            return f"⚠️ Stopped by an API error ({error}) after {took} · {tools}"
        if self.outcome == "ended":
            return f"⏹ The session ended after {took} · {tools}"
        if self.outcome == "archived":
            return f"🗄️ Thread archived: its session was stopped after {took} · {tools}"
        state = "⏸ **Waiting for your answer**" if self.waiting else "⏳ **Working**"
        lines = [f"{state} · {_seconds(now - self.started)} · {tools}"]
        if self.task:
            lines.append(f"-# 🤖 A background task reported back: {self.task}")
        if self.text.strip():
            shown = self.text.strip()
            if len(shown) > TEXT_SHOWN:
                shown = "…" + shown[-TEXT_SHOWN:]
            lines.append("> " + shown.replace("\n", "\n> "))
        if self.tool:
            name, summary, since = self.tool
            shown = summary.replace("`", "'")
            about = f": `{shown}`" if summary else ""
            state = f"· {_seconds(now - since)}" if self.tool_running else "✓"
            lines.append(f"🔧 {name}{about} {state}")
        return "\n".join(lines)


def turn_cost(cost0: float | None, cost_now: object) -> float | None:
    """What a turn cost: the session's statusLine cost now minus at the turn's start (None:
    the start is unknown; a lower figure now means a new process: its whole cost)."""
    if cost0 is None or not _is_number(cost_now):
        return None
    return float(cost_now) - cost0 if float(cost_now) >= cost0 else float(cost_now)


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9


def _seconds(value: float) -> str:
    value = max(0, int(value))
    return f"{value} s" if value < 90 else f"{value // 60} min {value % 60:02d} s"
