"""Who may act, enumerated: every way into a bot — each button and select it registers, each
slash command and autocomplete in its tree, a modal submit, a click no item receives — runs
the owner check (``bridge.bot.client.allowed``) before anything else, so a stranger is refused
and nothing happens. The bot is the real ``BridgeBot`` as ``run`` builds it (not logged in);
the interactions are stand-ins with what the check reads: who, which kind, which id, and a
response that records the answer.

``tests/e2e/test_allowed_users.py`` shows the same through the emulator for a prompt, a slash
command and the panel."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace

import discord
import pytest
from discord import app_commands

from bridge.bot.app import BridgeBot
from bridge.bot.away.away_buttons import OWNER_BUDGET
from bridge.bot.away.schedule import OWNER_ONLY as SCHEDULE_OWNER_ONLY
from bridge.bot.changes import review
from bridge.bot.client import COMMAND_ACTIONS, OWNER_ONLY, REFUSED, BridgeItem, may_react
from bridge.bot.control.commands import BridgeCommandTree
from bridge.bot.operations.audit_command import OWNER_AUDIT
from bridge.bot.prompts.interactions import answer_orphan_click, route_modal_submit
from bridge.bot.reach.preview import OWNER_SENDS
from bridge.config import BridgeConfig
from bridge.state import runtime

OWNER, ALLOWED, STRANGER = "100000000000000002", "100000000000000005", "100000000000000006"
CHANNEL, GENERAL = "100000000000000003", "100000000000000009"
MEMBER = "100000000000000007"  # a member with one role (the test's), no listed user
ROLES = {
    "watch": "200000000000000001",
    "drive": "200000000000000002",
    "approve": "200000000000000003",
}
# What a click needs (docs/guide.md's Roles table); every other item needs drive.
APPROVE_ITEMS = {"PromptButton", "PromptSelect", "ScreenButton", "FinishButton"}
WATCH_ITEMS = {"DiffButton", "FileSelect", "FilePageButton", "HistoryPick", "HistoryPage"}
KEY, RID = "100000000000000003", "abc123def456"

# One id per item the bot registers, as the bot posts it: a new item must add its own.
SAMPLE_IDS = {
    "PromptButton": f"db:p:{RID}:allow",
    "PromptSelect": f"db:s:{RID}:q0",
    "InterruptButton": f"db:int:{KEY}",
    "WorktreeButton": f"db:wt:remove:{KEY}",
    "ArchiveButton": f"db:arch:stop:{KEY}",
    "PanelButton": f"db:panel:start:{KEY}",
    "PanelSelect": "db:panel:pick:0",
    "ScreenButton": f"db:scr:{KEY}:0123456789ab:o1",
    "DiffButton": f"db:diff:{KEY}:abcdef1:1234567",
    "RemoveButton": f"db:proj:delete:{KEY}",
    "FinishButton": f"db:fin:domerge:{KEY}:0123456789ab",
    "FileSelect": f"db:rv:pick:{KEY}:abcdef1:1234567:0",
    "FilePageButton": f"db:rv:page:{KEY}:abcdef1:1234567:1",
    "CommentButton": f"db:rv:note:{KEY}:abcdef1:1234567:0",
    "DraftButton": f"db:rv:send:{KEY}",
    "DropSelect": f"db:rv:drop:{KEY}",
    "ScheduleButton": "db:sch:run:0123abcd",
    "LimitButton": f"db:lim:now:{KEY}",
    "BudgetButton": f"db:bud:more:{KEY}",
    "SessionPick": "db:ms:pick:0",
    "SessionPage": "db:ms:page:1",
    "AdoptButton": "db:ms:adopt:31337-1342251",
    "ReleaseButton": f"db:ms:release:{KEY}",
    "HistoryPick": f"db:hist:pick:{KEY}:0",
    "HistoryPage": f"db:hist:page:{KEY}:1",
    "ResumeButton": f"db:hist:resume:{KEY}:71313fe6-88f0-4a0f-b883-f3c1c91e1936",
    "QueueButton": f"db:q:cancel:{KEY}:0123456789ab",
    "StallButton": f"db:stall:peek:{KEY}",
    "SteerButton": f"db:q:later:{KEY}:{KEY}",
    "SendToClaude": f"db:pv:send:{KEY}",
    "LateButton": f"db:late:send:{KEY}:{KEY}",
}
SELECTS = ("db:s:", "db:panel:pick:", "db:rv:pick:", "db:rv:drop:", "db:ms:pick:", "db:hist:pick:")
# The owner's, not allowedUserIds' (/project's, /schedule's, a reached budget's, /sessions' and
# /history's): what each says to the others.
MACHINE_ITEMS = (
    "SessionPick",
    "SessionPage",
    "AdoptButton",
    "ReleaseButton",
    "HistoryPick",
    "HistoryPage",
    "ResumeButton",
)
OWNER_ONLY_ITEMS = {
    "RemoveButton": OWNER_ONLY,
    "ScheduleButton": SCHEDULE_OWNER_ONLY,
    "BudgetButton": OWNER_BUDGET,
    "SendToClaude": OWNER_SENDS,
    **dict.fromkeys(MACHINE_ITEMS, OWNER_ONLY),
}
COMMANDS = {
    "status",
    "start",
    "stop",
    "esc",
    "peek",
    "mode",
    "model",
    "new",
    "resume",
    "clear",
    "compact",
    "keys",
    "diff",
    "finish",
    "usage",
    "project add",
    "project remove",
    "project list",
    "schedule at",
    "schedule in",
    "schedule daily",
    "schedule weekdays",
    "schedule every",
    "schedule cron",
    "schedule list",
    "sessions",
    "history",
    "queue",
    "preview",
    "audit",
}
OWNER_ONLY_COMMANDS = {
    name: SCHEDULE_OWNER_ONLY if name.startswith("schedule") else OWNER_ONLY
    for name in COMMANDS
    if name.startswith(("project", "schedule", "sessions", "history"))
} | {"audit": OWNER_AUDIT}


class Response:
    """What the bot answered: (text or "autocomplete", ephemeral or the choices)."""

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    async def send_message(
        self, content: str | None = None, *, ephemeral: bool = False, **_: object
    ) -> None:
        self.sent.append((content, ephemeral))

    async def autocomplete(self, choices: list) -> None:
        self.sent.append(("autocomplete", choices))

    def is_done(self) -> bool:
        return bool(self.sent)


def interaction(
    bot: BridgeBot, user: str, kind: discord.InteractionType, roles: tuple = (), **data: object
):
    """An interaction in the project's channel, from a member with these role ids."""
    member = SimpleNamespace(
        id=int(user), display_name="someone", roles=[SimpleNamespace(id=int(r)) for r in roles]
    )
    return SimpleNamespace(
        client=bot,
        user=member,
        type=kind,
        data=data,
        command=None,
        response=Response(),
        message=None,
        channel_id=int(CHANNEL),
        channel=SimpleNamespace(id=int(CHANNEL)),
        command_failed=False,
        extras={},
    )


def click(bot: BridgeBot, user: str, custom_id: str, roles: tuple = ()):
    kind = discord.InteractionType.component
    return interaction(bot, user, kind, roles, custom_id=custom_id)


@pytest.fixture
def bot(tmp_path):
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "tok", "ownerUserId": OWNER, "allowedUserIds": [ALLOWED]},
                "tmux": {"session": "unit", "socketName": "dbunit-who-may-act"},
                "generalChannelId": GENERAL,
                "roles": {ROLES["watch"]: ["watch"], ROLES["drive"]: ["drive"]},
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": CHANNEL,
                        "projectPath": str(tmp_path),
                        "roles": {ROLES["approve"]: ["approve"]},
                    }
                ],
            }
        ],
    }
    cfg = BridgeConfig(raw, str(tmp_path / "config.json"), env={})
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    return BridgeBot(cfg, cfg.servers[0], rt)


def registered_items(bot: BridgeBot) -> list[type]:
    return list(bot._connection._view_store._dynamic_items.values())


def bridge_dynamic_items() -> set[type]:
    """Every DynamicItem class the bridge defines (its modules are imported with the app)."""
    found, todo = set(), [discord.ui.DynamicItem]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("bridge.") and sub is not BridgeItem:
                found.add(sub)
    return found


def test_every_item_the_bridge_defines_is_registered_and_checks_who_clicks(bot) -> None:
    registered = registered_items(bot)
    assert set(registered) == bridge_dynamic_items()
    assert {cls.__name__ for cls in registered} == set(SAMPLE_IDS)
    for cls in registered:
        assert issubclass(cls, BridgeItem), cls
        assert cls.interaction_check is not discord.ui.DynamicItem.interaction_check, cls
        assert cls.clicked is not BridgeItem.clicked, cls  # what its callback runs


async def item_for(bot: BridgeBot, cls: type, user: str, roles: tuple = ()):
    """The item as discord.py builds it for a click: matched by its template, then
    ``from_custom_id`` with the component the message shows."""
    custom = SAMPLE_IDS[cls.__name__]
    match = re.fullmatch(cls.__discord_ui_compiled_template__, custom)
    assert match is not None, custom
    shown = (
        discord.ui.Select(custom_id=custom)
        if custom.startswith(SELECTS)
        else discord.ui.Button(label="shown", custom_id=custom)
    )
    event = click(bot, user, custom, roles)
    return await cls.from_custom_id(event, shown, match), event


@pytest.mark.parametrize("name", sorted(SAMPLE_IDS))
def test_each_item_refuses_a_stranger_before_its_callback(bot, name) -> None:
    (cls,) = [c for c in registered_items(bot) if c.__name__ == name]

    async def scenario() -> None:
        item, stranger = await item_for(bot, cls, STRANGER)
        assert await item.interaction_check(stranger) is False
        assert stranger.response.sent == [(REFUSED, True)]

        item, allowed = await item_for(bot, cls, ALLOWED)
        if name in OWNER_ONLY_ITEMS:
            assert await item.interaction_check(allowed) is False
            assert allowed.response.sent == [(OWNER_ONLY_ITEMS[name], True)]
        else:
            assert await item.interaction_check(allowed) is True
            assert allowed.response.sent == []

        item, owner = await item_for(bot, cls, OWNER)
        assert await item.interaction_check(owner) is True
        assert owner.response.sent == []

    asyncio.run(scenario())


@pytest.mark.parametrize("name", sorted(SAMPLE_IDS))
def test_each_item_lets_a_role_do_only_what_the_click_needs(bot, name) -> None:
    (cls,) = [c for c in registered_items(bot) if c.__name__ == name]
    needs = "approve" if name in APPROVE_ITEMS else "watch" if name in WATCH_ITEMS else "drive"
    assert cls.needs == needs

    async def scenario() -> None:
        for action, role in ROLES.items():
            item, event = await item_for(bot, cls, MEMBER, (role,))
            if name in OWNER_ONLY_ITEMS:
                assert await item.interaction_check(event) is False
            elif needs in ("watch", action):
                assert await item.interaction_check(event) is True
                assert event.extras["grant"] == f"role {role}"  # who, for the audit trail
            else:
                assert await item.interaction_check(event) is False
                assert event.response.sent == [(f"You may not {needs} in alpha.", True)]

    asyncio.run(scenario())


def test_the_watching_and_approving_commands_are_commands() -> None:
    """``COMMAND_ACTIONS`` names real commands (a renamed one would need drive silently)."""
    assert set(COMMAND_ACTIONS) <= COMMANDS
    assert {COMMAND_ACTIONS[name] for name in ("status", "peek", "diff")} == {"watch"}
    assert COMMAND_ACTIONS["finish"] == "approve"


def test_every_slash_command_and_autocomplete_refuses_a_stranger_first(bot) -> None:
    assert isinstance(bot.tree, BridgeCommandTree)
    commands = {
        c.qualified_name: c for c in bot.tree.walk_commands() if isinstance(c, app_commands.Command)
    }
    assert set(commands) == COMMANDS

    async def scenario() -> None:
        for name, command in commands.items():
            data = {"name": name.split()[0], "type": 1}
            stranger = interaction(
                bot, STRANGER, discord.InteractionType.application_command, **data
            )
            await bot.tree._call(stranger)  # what discord.py runs for a slash command
            assert stranger.response.sent == [(REFUSED, True)], name
            assert stranger.command_failed, name
            for param in command.parameters:
                if param.autocomplete:
                    asking = interaction(
                        bot, STRANGER, discord.InteractionType.autocomplete, **data
                    )
                    await bot.tree._call(asking)
                    assert asking.response.sent == [("autocomplete", [])], name

            allowed = interaction(bot, ALLOWED, discord.InteractionType.application_command)
            allowed.command = command
            assert await bot.tree.interaction_check(allowed) is True
            may_run = await command._check_can_run(allowed)  # the command's own checks
            assert may_run is (name not in OWNER_ONLY_COMMANDS), name
            expected = [(OWNER_ONLY_COMMANDS[name], True)] if name in OWNER_ONLY_COMMANDS else []
            assert allowed.response.sent == expected, name

    asyncio.run(scenario())


def test_project_names_are_suggested_to_the_owner_only(bot) -> None:
    """discord.py does not run a group's check for an autocomplete: it checks itself."""
    project = bot.tree.get_command("project")
    remove = project.get_command("remove")
    suggest = remove._params["project"].autocomplete

    async def scenario() -> None:
        kind = discord.InteractionType.autocomplete
        assert await suggest(project, interaction(bot, ALLOWED, kind), "") == []
        owner = await suggest(project, interaction(bot, OWNER, kind), "")
        assert [c.value for c in owner] == ["alpha"]

    asyncio.run(scenario())


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def on_modal(self, interaction: object, custom_id: str) -> None:
        self.calls.append(("modal", custom_id))


def test_a_modal_submit_and_an_orphan_click_refuse_a_stranger(bot) -> None:
    bot.prompts = Recorder()

    async def scenario() -> None:
        custom = f"db:p:{RID}:tell"
        submit = interaction(bot, STRANGER, discord.InteractionType.modal_submit, custom_id=custom)
        assert await route_modal_submit(submit) is True
        assert submit.response.sent == [(REFUSED, True)]
        orphan = click(bot, STRANGER, f"db:p:{RID}:deny")  # a button the message no longer has
        assert await answer_orphan_click(orphan) is True
        assert orphan.response.sent == [(REFUSED, True)]
        assert bot.prompts.calls == []

        owner = interaction(bot, OWNER, discord.InteractionType.modal_submit, custom_id=custom)
        assert await route_modal_submit(owner) is True
        assert bot.prompts.calls == [("modal", custom)]

    asyncio.run(scenario())


def test_a_review_comment_form_refuses_a_stranger(bot, tmp_path) -> None:
    """The review's comment form is a modal: its submit passes the check in on_interaction,
    before anything is read or written."""
    custom = f"db:rv:form:{KEY}:abcdef1:1234567:0"
    values = {"lines": "1", "text": "a stranger's comment"}
    fields = [
        {"type": 1, "components": [{"type": 4, "custom_id": k, "value": v}]}
        for k, v in values.items()
    ]

    async def scenario() -> None:
        stranger = interaction(
            bot, STRANGER, discord.InteractionType.modal_submit, custom_id=custom, components=fields
        )
        await review.on_interaction(stranger)
        assert stranger.response.sent == [(REFUSED, True)]

    asyncio.run(scenario())
    assert not (tmp_path / "state" / "state" / "reviews").exists()  # no draft was written


def test_each_feature_listens_where_it_said(bot) -> None:
    listening = {event: len(handlers) for event, handlers in bot.feature_listeners.items()}
    assert listening == {
        "interaction": 2,  # modal submits (prompts', review comments') and orphan clicks
        "raw_thread_update": 1,  # an archived thread
        "raw_thread_delete": 1,
        "raw_message_delete": 1,  # the panel's message
        "raw_reaction_add": 1,  # ✅ / ❌ on a prompt
        "app_command_completion": 1,  # a slash command that ran: the audit trail
    }


BOT_ID, OTHER_BOT = 100000000000000001, 100000000000000008


def reaction(user: str | int, author: int | None = BOT_ID, emoji: str = "✅") -> SimpleNamespace:
    """A MESSAGE_REACTION_ADD as discord.py hands it over (what ``may_react`` reads)."""
    return SimpleNamespace(
        user_id=int(user),
        message_author_id=author,
        emoji=emoji,
        message_id=1,
        channel_id=int(CHANNEL),
        member=None,
    )


def test_a_reaction_acts_only_for_an_allowed_user_on_the_bots_own_message(bot) -> None:
    """A reaction is no interaction: discord.py runs no check for it, so ``may_react`` asks
    ``Server.may_act`` itself, and never acts for the bot or on another bot's message."""
    bot._connection.user = SimpleNamespace(id=BOT_ID)
    assert may_react(bot, reaction(OWNER)) is True
    assert may_react(bot, reaction(ALLOWED)) is True
    assert may_react(bot, reaction(OWNER, author=None)) is True  # Discord may leave it out
    assert may_react(bot, reaction(STRANGER)) is False
    assert may_react(bot, reaction(BOT_ID)) is False  # its own (it never reacts to prompts)
    assert may_react(bot, reaction(OWNER, author=OTHER_BOT)) is False
    assert may_react(bot, reaction(OWNER, author=int(OWNER))) is False


class Reactions:
    def __init__(self) -> None:
        self.seen: list[int] = []

    async def on_reaction(self, client: object, payload: SimpleNamespace) -> None:
        self.seen.append(payload.user_id)


def test_a_strangers_reaction_never_reaches_the_prompts(bot) -> None:
    bot._connection.user = SimpleNamespace(id=BOT_ID)
    bot.prompts = Reactions()
    (listener,) = bot.feature_listeners["raw_reaction_add"]

    async def scenario() -> None:
        await listener(reaction(STRANGER))
        await listener(reaction(OWNER, author=OTHER_BOT))
        await listener(reaction(OWNER))

    asyncio.run(scenario())
    assert bot.prompts.seen == [int(OWNER)]
