"""Every ``custom_id`` the bridge puts on Discord buttons, selects and modals, in one place.

These are wire formats: ids already posted on Discord must keep matching after a restart or an
upgrade (the bot answers them with discord.py ``DynamicItem``s), so a format here never changes,
it only gains new kinds. ``*_TEMPLATE`` are the regular expressions (as strings) the
``DynamicItem``s match; the functions build the ids (and :func:`parse_prompt` reads a prompt's
back). A matching id is not yet a valid one: a prompt's action is checked against the prompt's
kind and contents before it is used (``bridge/discord/prompt_clicks.parse``, by the actions'
grammar ``bridge/discord/prompt_actions`` holds), since a client can send any id.

    db:p:<request id>:<action>      a prompt's button, and the modal it opens
                                    (bot/prompts/interactions.py)
    db:s:<request id>:q<i>          a prompt question's select menu
    db:int:<channel or thread id>   ⏹ Interrupt on a turn's status message (bot/turn/progress.py)
    db:wt:remove|keep:<thread id>   Remove anyway / Keep on a kept worktree (bot/control/threads.py)
    db:arch:stop|remove|keep:<thread id>  Stop / remove worktree / Keep after an archive that
                                    was not the owner's (bot/control/threads.py)
    db:panel:<action>:<argument>    the control panel's buttons (bot/control/panel.py)
    db:panel:pick:<page>            the control panel's project select menu
    db:scr:<channel or thread id>:<screen fingerprint>:o<i>|show|esc
                                    a Claude Code screen offered on Discord (bot/prompts/screens.py)
    db:proj:remove|delete|cancel:<channel id>
                                    /project remove's confirmation (bot/control/project_remove.py)
    db:diff:<channel or thread id>:<old tree>:<new tree>
                                    Diff: what a turn changed (abbreviated tree ids;
                                    bot/changes/diff.py)
    db:fin:<action>:<thread id>[:<check>]
                                    Finish… a worktree thread and its steps (bot/changes/finish.py);
                                    a confirmation carries 12 hex digits naming what it previewed
    db:rv:pick|page:<key>:<old tree>:<new tree>:<page>
                                    a diff's file select, and its pages (bot/changes/review.py)
    db:rv:note|form:<key>:<old tree>:<new tree>:<file index>
                                    Comment… on a file's lines, and the modal it opens
    db:rv:send|discard:<key>        a draft review's buttons (bot/changes/review_draft.py)
    db:rv:drop:<key>                a draft review's "remove a comment" select
    db:sch:run|pause|resume|delete:<schedule id>
                                    /schedule list's buttons (bot/away/schedule.py)
    db:lim:auto|now|cancel:<key>    a usage limit's Resume at reset / Resume now / Cancel
                                    (bot/away/watch.py)
    db:bud:more|stop:<key>          a reached budget's Continue (+$N) / Stop (bot/away/watch.py)
    db:ms:pick|page:<page>          /sessions' select of this machine's sessions, its pages
    db:ms:adopt:<pid>-<start>       Adopt one (its process id and start time; bot/reach/adopt.py)
    db:ms:release:<thread id>       Release an adopted session
    db:hist:pick|page:<channel id>:<page>
                                    /history's select of a project's conversations, its pages
    db:hist:resume:<channel id>:<session id>
                                    Resume in a thread (bot/reach/history.py)
    db:q:now|int|cancel:<channel or thread id>:<entry id>
                                    Send now / Interrupt and send / Cancel on a queued
                                    message (bot/turn/queue.py)
    db:q:later|stop:<channel or thread id>:<message id>
                                    ⏭ After this turn / ⏹ Interrupt and send on the receipt
                                    of a message typed mid-turn (bot/turn/queue.py)
    db:stall:peek|wait:<channel or thread id>
                                    Peek / Keep waiting on a stall notice (bot/turn/stalls.py)
    db:stall:restart:<channel or thread id>
                                    Restart and resume a session whose Claude Code exited
    db:pv:send:<channel or thread id>
                                    Send to Claude on a /preview's screenshots
                                    (bot/reach/preview.py)
    db:late:send|drop:<channel or thread id>:<message id>
                                    ▶ Send now / ✖ Drop on a message sent while the bot was
                                    away, too old to type unasked (bot/turn/catchup.py)

No imports: the permission hook builds prompt ids on its fast path
(``bridge/discord/render/decisions.py``).
"""

from __future__ import annotations

PROMPT_BUTTON = "db:p:"
PROMPT_SELECT = "db:s:"
INTERRUPT = "db:int:"
WORKTREE = "db:wt:"
ARCHIVE = "db:arch:"
PANEL = "db:panel:"
PANEL_PICK = PANEL + "pick:"
SCREEN = "db:scr:"
PROJECT = "db:proj:"
DIFF = "db:diff:"
FINISH = "db:fin:"
REVIEW = "db:rv:"
SCHEDULE = "db:sch:"
LIMIT = "db:lim:"
BUDGET = "db:bud:"
SESSIONS = "db:ms:"
HISTORY = "db:hist:"
QUEUE = "db:q:"
STALL = "db:stall:"
PREVIEW = "db:pv:"
LATE = "db:late:"
MODAL_TEXT = "text"  # the text input of a prompt's modal (a note on a step: its step's value)
MODAL_MODE = "mode"  # the mode select of "Approve with notes"

_REQUEST_ACTION = r"(?P<rid>[a-z0-9]{12}):(?P<action>[a-z0-9:._]{1,70})"
_RID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # as _REQUEST_ACTION says
_ACTION_CHARS = _RID_CHARS | frozenset(":._")
_RID_LENGTH, _ACTION_LENGTH = 12, 70
_SNOWFLAKE = r"[0-9]{15,21}"
PROMPT_BUTTON_TEMPLATE = PROMPT_BUTTON + _REQUEST_ACTION
PROMPT_SELECT_TEMPLATE = PROMPT_SELECT + _REQUEST_ACTION
INTERRUPT_TEMPLATE = INTERRUPT + rf"(?P<key>{_SNOWFLAKE})"
WORKTREE_TEMPLATE = WORKTREE + rf"(?P<action>remove|keep):(?P<key>{_SNOWFLAKE})"
ARCHIVE_TEMPLATE = ARCHIVE + rf"(?P<action>stop|remove|keep):(?P<key>{_SNOWFLAKE})"
PANEL_TEMPLATE = PANEL + r"(?P<action>start|stop|stopnow|refresh|page):(?P<arg>[0-9]{1,21})"
PANEL_PICK_TEMPLATE = PANEL_PICK + r"(?P<page>[0-9]{1,4})"
PROJECT_TEMPLATE = PROJECT + rf"(?P<action>remove|delete|cancel):(?P<key>{_SNOWFLAKE})"
DIFF_TEMPLATE = DIFF + rf"(?P<key>{_SNOWFLAKE}):(?P<old>[0-9a-f]{{7,40}}):(?P<new>[0-9a-f]{{7,40}})"
FINISH_ACTIONS = (
    "menu",
    "back",
    "merge",
    "domerge",
    "pr",
    "dopush",
    "keep",
    "discard",
    "dodiscard",
    "commit",
    "resolve",
    "end",
)
FINISH_TEMPLATE = (
    FINISH + rf"(?P<action>{'|'.join(FINISH_ACTIONS)}):(?P<key>{_SNOWFLAKE})"
    r"(?::(?P<check>[0-9a-f]{12}))?"
)
_TREES = rf"(?P<key>{_SNOWFLAKE}):(?P<old>[0-9a-f]{{7,40}}):(?P<new>[0-9a-f]{{7,40}})"
REVIEW_PICK_TEMPLATE = REVIEW + rf"pick:{_TREES}:(?P<page>[0-9]{{1,4}})"
REVIEW_PAGE_TEMPLATE = REVIEW + rf"page:{_TREES}:(?P<page>[0-9]{{1,4}})"
REVIEW_NOTE_TEMPLATE = REVIEW + rf"note:{_TREES}:(?P<index>[0-9]{{1,5}})"
REVIEW_FORM_TEMPLATE = REVIEW + rf"form:{_TREES}:(?P<index>[0-9]{{1,5}})"
REVIEW_DRAFT_TEMPLATE = REVIEW + rf"(?P<action>send|discard):(?P<key>{_SNOWFLAKE})"
REVIEW_DROP_TEMPLATE = REVIEW + rf"drop:(?P<key>{_SNOWFLAKE})"
SCHEDULE_TEMPLATE = SCHEDULE + r"(?P<action>run|pause|resume|delete):(?P<sid>[0-9a-f]{8})"
LIMIT_TEMPLATE = LIMIT + rf"(?P<action>auto|now|cancel):(?P<key>{_SNOWFLAKE})"
BUDGET_TEMPLATE = BUDGET + rf"(?P<action>more|stop):(?P<key>{_SNOWFLAKE})"
_TOKEN = r"[0-9]{1,10}-[0-9]{1,20}"
SESSIONS_PICK_TEMPLATE = SESSIONS + r"pick:(?P<page>[0-9]{1,4})"
SESSIONS_PAGE_TEMPLATE = SESSIONS + r"page:(?P<page>[0-9]{1,4})"
SESSIONS_ADOPT_TEMPLATE = SESSIONS + rf"adopt:(?P<token>{_TOKEN})"
SESSIONS_RELEASE_TEMPLATE = SESSIONS + rf"release:(?P<key>{_SNOWFLAKE})"
_SESSION_ID = r"[0-9a-f-]{8,40}"
HISTORY_PICK_TEMPLATE = HISTORY + rf"pick:(?P<key>{_SNOWFLAKE}):(?P<page>[0-9]{{1,4}})"
HISTORY_PAGE_TEMPLATE = HISTORY + rf"page:(?P<key>{_SNOWFLAKE}):(?P<page>[0-9]{{1,4}})"
HISTORY_RESUME_TEMPLATE = HISTORY + rf"resume:(?P<key>{_SNOWFLAKE}):(?P<session>{_SESSION_ID})"
QUEUE_TEMPLATE = (
    QUEUE + rf"(?P<action>now|int|cancel):(?P<key>{_SNOWFLAKE}):(?P<entry>[0-9a-f]{{12}})"
)
STEER_TEMPLATE = QUEUE + rf"(?P<action>later|stop):(?P<key>{_SNOWFLAKE}):(?P<message>{_SNOWFLAKE})"
STALL_TEMPLATE = STALL + rf"(?P<action>peek|wait|restart):(?P<key>{_SNOWFLAKE})"
PREVIEW_TEMPLATE = PREVIEW + rf"send:(?P<key>{_SNOWFLAKE})"
LATE_TEMPLATE = LATE + rf"(?P<action>send|drop):(?P<key>{_SNOWFLAKE}):(?P<message>{_SNOWFLAKE})"
SCREEN_TEMPLATE = (
    SCREEN + rf"(?P<key>{_SNOWFLAKE}):(?P<fingerprint>[0-9a-f]{{12}}):"
    r"(?P<action>o[0-9]{1,2}|show|esc)"
)


def prompt(request_id: str, *action: str | int, select: bool = False) -> str:
    """``db:p:<id>:<action…>`` (a button or modal) or ``db:s:<id>:<action…>`` (a select)."""
    return (PROMPT_SELECT if select else PROMPT_BUTTON) + ":".join([request_id, *map(str, action)])


def parse_prompt(custom_id: str, select: bool = False) -> tuple[str, str] | None:
    """(request id, action) of a prompt's button or modal id (``select``: a select menu's),
    or None if ``custom_id`` is not one: what :data:`PROMPT_BUTTON_TEMPLATE` (or
    :data:`PROMPT_SELECT_TEMPLATE`) matches, read without ``re``."""
    prefix = PROMPT_SELECT if select else PROMPT_BUTTON
    if not custom_id.startswith(prefix):
        return None
    rest = custom_id[len(prefix) :]
    rid, colon, action = (
        rest[:_RID_LENGTH],
        rest[_RID_LENGTH : _RID_LENGTH + 1],
        rest[_RID_LENGTH + 1 :],
    )
    if len(rid) < _RID_LENGTH or not _RID_CHARS.issuperset(rid) or colon != ":":
        return None
    if not 1 <= len(action) <= _ACTION_LENGTH or not _ACTION_CHARS.issuperset(action):
        return None
    return rid, action


def interrupt(key: str) -> str:
    return INTERRUPT + key


def worktree(action: str, thread_id: str) -> str:
    return f"{WORKTREE}{action}:{thread_id}"


def archive(action: str, thread_id: str) -> str:
    return f"{ARCHIVE}{action}:{thread_id}"


def panel(action: str, arg: str) -> str:
    return f"{PANEL}{action}:{arg}"


def panel_pick(page: int) -> str:
    return f"{PANEL_PICK}{page}"


def screen(key: str, fingerprint: str, action: str) -> str:
    """A button of a screen prompt: ``action`` is ``o<option index>``, ``show`` or ``esc``."""
    return f"{SCREEN}{key}:{fingerprint}:{action}"


def project(action: str, channel_id: str) -> str:
    """A button of ``/project remove``'s question: ``remove``, ``delete`` (and the channel)
    or ``cancel``."""
    return f"{PROJECT}{action}:{channel_id}"


def diff(key: str, old: str, new: str) -> str:
    """The Diff button of a turn: the two snapshot trees (abbreviated) of ``key``'s session."""
    return f"{DIFF}{key}:{old}:{new}"


def finish(action: str, thread_id: str, check: str = "") -> str:
    """A Finish step of a worktree thread; ``check``: what a confirmation previewed."""
    return f"{FINISH}{action}:{thread_id}" + (f":{check}" if check else "")


def review_files(action: str, key: str, old: str, new: str, number: int) -> str:
    """A diff's file select (``pick``, showing page ``number``), a page button (``page``),
    **Comment…** on file ``number`` (``note``) or the modal it opens (``form``)."""
    return f"{REVIEW}{action}:{key}:{old}:{new}:{number}"


def review_draft(action: str, key: str) -> str:
    """A draft review's **Send review** / **Discard** (``send``, ``discard``) or its remove
    select (``drop``)."""
    return f"{REVIEW}{action}:{key}"


def schedule(action: str, schedule_id: str) -> str:
    """A button of ``/schedule list``: ``run``, ``pause``, ``resume`` or ``delete`` one entry."""
    return f"{SCHEDULE}{action}:{schedule_id}"


def limit(action: str, key: str) -> str:
    """A usage limit's button: ``auto`` (resume at the reset), ``now`` or ``cancel``."""
    return f"{LIMIT}{action}:{key}"


def budget(action: str, key: str) -> str:
    """A reached budget's button: ``more`` (Continue, raising it) or ``stop``."""
    return f"{BUDGET}{action}:{key}"


def sessions(action: str, arg: str) -> str:
    """``/sessions``' select (``pick``) or page button (``page``) showing page ``arg``,
    **Adopt** (``adopt``, ``arg`` a :func:`is_session_token`) or **Release** (``release``,
    ``arg`` the thread)."""
    return f"{SESSIONS}{action}:{arg}"


def is_session_token(value: str) -> bool:
    """``<pid>-<start>``: how a running Claude Code process is named in a select or button."""
    pid, dash, start = value.partition("-")
    return bool(dash) and pid.isdigit() and start.isdigit() and len(value) <= 31


def history(action: str, key: str, arg: str) -> str:
    """``/history``'s select (``pick``) or page button (``page``) of channel ``key``'s
    project, showing page ``arg``; **Resume in a thread** (``resume``, ``arg`` the session)."""
    return f"{HISTORY}{action}:{key}:{arg}"


def queued(action: str, key: str, entry_id: str) -> str:
    """A queued message's **Send now** (``now``), **Interrupt and send** (``int``) or
    **Cancel** (``cancel``)."""
    return f"{QUEUE}{action}:{key}:{entry_id}"


def stall(action: str, key: str) -> str:
    """A stall notice's **Peek** / **Keep waiting** (``peek``, ``wait``), or **Restart and
    resume** (``restart``) when Claude Code exited."""
    return f"{STALL}{action}:{key}"


def late(action: str, key: str, message_id: str) -> str:
    """**▶ Send now** (``send``) or **✖ Drop** (``drop``) on a message sent while the bot was
    away, older than ``catchUpWindowMinutes``."""
    return f"{LATE}{action}:{key}:{message_id}"


def steered(action: str, key: str, message_id: str) -> str:
    """**⏭ After this turn** (``later``) or **⏹ Interrupt and send** (``stop``) on the receipt
    of a message typed into a running turn."""
    return f"{QUEUE}{action}:{key}:{message_id}"


def preview_send(key: str) -> str:
    """**Send to Claude** on a ``/preview``'s screenshots of session ``key``."""
    return f"{PREVIEW}send:{key}"
