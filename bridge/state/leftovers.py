"""What the bridge keeps of a project's sessions, counted and dropped when the project goes.

``/project remove`` unmaps a channel; what the bridge kept for that channel and its threads
would otherwise outlive it, keyed by the channel or thread id alone, and come back to life
the moment the same channel is mapped again (to any folder): its queued prompts typed, its
schedules fired, its conversation resumed (``--resume`` carries one across folders), a
usage-limit wait resumed. :func:`survey` says what there is, for the question;
:func:`drop` removes it all, for the confirm:

* ``state/queued-<key>.json``, ``state/steered-<key>.json``: queued prompts, mid-turn messages;
* ``schedules/<id>.json`` whose session is one of the keys (of this bot's server);
* ``sessions/<key>.json``: the conversation ``--resume`` would continue;
* ``state/<key>.json``: the bot's record (pane, worktree, wanted running or stopped);
* ``state/reviews/<key>.json``: a draft review;
* ``screens/<key>.json``: messages held behind a screen;
* ``away/limit-``, ``budget-``, ``warned-<key>.json`` and the conversation's
  ``raise-<session>.json``: waits at a usage limit or a budget, and their raises;
* ``state/handled-<key>.json``: where the catch-up is in the channel's messages (mapped
  again, the channel must not type what was said in it meanwhile).

Files the owner or Claude made stay (``uploads/``, ``outputs/``), and so does the outbox: a
reply not yet delivered is still delivered. Blocking: the bot calls these in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge.state import (
    away,
    handled_messages,
    held_messages,
    queued_prompts,
    review_drafts,
    runtime,
    schedules,
    session_record,
    session_state,
)
from bridge.state.schedules import Schedule


@dataclass
class Leftovers:
    """What there is (or was) of the sessions ``keys``."""

    queued: dict[str, list[dict]] = field(default_factory=dict)  # key → its queued prompts
    schedules: list[Schedule] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)  # keys with a conversation recorded
    drafts: int = 0
    held: int = 0  # messages held behind a screen
    waits: list[str] = field(default_factory=list)  # keys waiting at a usage limit or budget

    @property
    def queued_count(self) -> int:
        return sum(len(items) for items in self.queued.values())

    def merge(self, other: Leftovers) -> None:
        """Add what ``other`` (of other keys) holds."""
        self.queued.update(other.queued)
        self.schedules += other.schedules
        self.conversations += other.conversations
        self.drafts += other.drafts
        self.held += other.held
        self.waits += other.waits


def survey(rt: runtime.Runtime, server: str, keys: list[str]) -> Leftovers:
    """What the bridge keeps of sessions ``keys`` (channel and thread ids) of ``server``."""
    found = Leftovers()
    for key in keys:
        items = queued_prompts.entries(rt, key)
        if items:
            found.queued[key] = items
        if session_record.read_record(rt, key):
            found.conversations.append(key)
        if review_drafts.load(rt, key) is not None:
            found.drafts += 1
        found.held += len(held_messages.load(rt, key)["messages"])
        if away.exists(rt, "limit", key) or away.exists(rt, "budget", key):
            found.waits.append(key)
    wanted = set(keys)
    found.schedules = [e for e in schedules.all_entries(rt, server) if e.key in wanted]
    return found


def drop(rt: runtime.Runtime, server: str, keys: list[str]) -> Leftovers:
    """Remove everything :func:`survey` finds of ``keys`` (and the records it does not
    count: the bot's session record, mid-turn messages, budget warnings); what it found."""
    found = survey(rt, server, keys)
    for entry in found.schedules:
        schedules.remove(rt, entry.id)
    for key in keys:
        queued_prompts.drop(rt, key)
        _drop_raise(rt, (session_record.read_record(rt, key) or {}).get("session_id"))
        session_record.remove_record(rt, key)
        session_state.remove(rt, key)
        review_drafts.delete(rt, key)
        held_messages.clear(rt, key)
        handled_messages.remove(rt, key)
        for kind in ("limit", "budget", "warned"):
            away.remove(rt, kind, key)
    return found


def _drop_raise(rt: runtime.Runtime, session_id: object) -> None:
    """The dollars **Continue** added to the conversation's budget go with it."""
    if not isinstance(session_id, str):
        return
    try:
        away.remove(rt, "raise", session_id)
    except ValueError:  # not a plain name: never a file of ours
        pass
