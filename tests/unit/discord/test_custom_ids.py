"""Custom ids are wire formats: ids already posted on Discord (before a restart, before an
upgrade) must still reach the DynamicItem that answers them. These literal ids are what the
bridge has been posting; every builder and template is checked against them."""

from __future__ import annotations

import re

import pytest

from bridge.bot.changes.review import CommentButton, FilePageButton, FileSelect
from bridge.bot.changes.review_draft import DraftButton, DropSelect
from bridge.bot.control.panel import PanelButton, PanelSelect
from bridge.bot.control.threads import ArchiveButton, WorktreeButton
from bridge.bot.prompts.components import PromptButton, PromptSelect
from bridge.bot.prompts.screens import ScreenButton
from bridge.bot.reach.adopt import AdoptButton, ReleaseButton, SessionPage, SessionPick
from bridge.bot.reach.history import HistoryPage, HistoryPick, ResumeButton
from bridge.bot.turn.interrupt_button import InterruptButton
from bridge.discord import custom_ids
from bridge.discord import prompt_actions as actions
from bridge.discord.render import decisions as views

RID = "abc123def456"
KEY = "100000000000000003"
OLD, NEW = "4b825dc642cb6eb9a060", "0123456789abcdef0123"  # tree ids, abbreviated as posted

POSTED = [  # (DynamicItem, an id as posted on Discord)
    (PromptButton, f"db:p:{RID}:allow"),
    (PromptButton, f"db:p:{RID}:always:1:l"),
    (PromptButton, f"db:p:{RID}:scope:p"),
    (PromptButton, f"db:p:{RID}:q0:o2"),
    (PromptButton, f"db:p:{RID}:q1:other:0.2"),
    (PromptButton, f"db:p:{RID}:plan:keep"),
    (PromptSelect, f"db:s:{RID}:q3"),
    (InterruptButton, f"db:int:{KEY}"),
    (WorktreeButton, f"db:wt:remove:{KEY}"),
    (WorktreeButton, f"db:wt:keep:{KEY}"),
    (ArchiveButton, f"db:arch:stop:{KEY}"),
    (ArchiveButton, f"db:arch:remove:{KEY}"),
    (ArchiveButton, f"db:arch:keep:{KEY}"),
    (PanelButton, f"db:panel:start:{KEY}"),
    (PanelButton, f"db:panel:stopnow:{KEY}"),
    (PanelButton, "db:panel:refresh:0"),
    (PanelButton, "db:panel:page:2"),
    (PanelSelect, "db:panel:pick:1"),
    (ScreenButton, f"db:scr:{KEY}:0123456789ab:o1"),
    (ScreenButton, f"db:scr:{KEY}:0123456789ab:show"),
    (ScreenButton, f"db:scr:{KEY}:0123456789ab:esc"),
    (FileSelect, f"db:rv:pick:{KEY}:{OLD}:{NEW}:0"),
    (FilePageButton, f"db:rv:page:{KEY}:{OLD}:{NEW}:2"),
    (CommentButton, f"db:rv:note:{KEY}:{OLD}:{NEW}:13"),
    (DraftButton, f"db:rv:send:{KEY}"),
    (DraftButton, f"db:rv:discard:{KEY}"),
    (DropSelect, f"db:rv:drop:{KEY}"),
    (SessionPick, "db:ms:pick:0"),
    (SessionPage, "db:ms:page:3"),
    (AdoptButton, "db:ms:adopt:31337-1342251"),
    (ReleaseButton, f"db:ms:release:{KEY}"),
    (HistoryPick, f"db:hist:pick:{KEY}:0"),
    (HistoryPage, f"db:hist:page:{KEY}:2"),
    (ResumeButton, f"db:hist:resume:{KEY}:71313fe6-88f0-4a0f-b883-f3c1c91e1936"),
]


@pytest.mark.parametrize(("item", "posted"), POSTED)
def test_ids_posted_before_still_match_exactly_one_dynamic_item(item, posted) -> None:
    matching = [i for i, _ in POSTED if re.fullmatch(i.__discord_ui_compiled_template__, posted)]
    assert set(matching) == {item}, posted


def test_builders_make_the_posted_formats() -> None:
    assert custom_ids.prompt(RID, "always", 1, "l") == f"db:p:{RID}:always:1:l"
    assert custom_ids.prompt(RID, "q3", select=True) == f"db:s:{RID}:q3"
    assert custom_ids.interrupt(KEY) == f"db:int:{KEY}"
    assert custom_ids.worktree("remove", KEY) == f"db:wt:remove:{KEY}"
    assert custom_ids.archive("stop", KEY) == f"db:arch:stop:{KEY}"
    assert custom_ids.panel("stop", KEY) == f"db:panel:stop:{KEY}"
    assert custom_ids.panel_pick(4) == "db:panel:pick:4"
    assert custom_ids.screen(KEY, "0123456789ab", "o3") == f"db:scr:{KEY}:0123456789ab:o3"
    assert custom_ids.review_files("pick", KEY, OLD, NEW, 1) == f"db:rv:pick:{KEY}:{OLD}:{NEW}:1"
    assert custom_ids.review_draft("send", KEY) == f"db:rv:send:{KEY}"


def test_a_reviews_longest_ids_fit_discord() -> None:
    """The longest key (21 digits), tree ids as posted, the largest index: within 100."""
    key = "9" * 21
    for action in ("pick", "page", "note", "form"):
        custom = custom_ids.review_files(action, key, OLD, NEW, 99999)
        assert len(custom) <= 100, custom
    form = re.fullmatch(
        custom_ids.REVIEW_FORM_TEMPLATE, custom_ids.review_files("form", KEY, OLD, NEW, 7)
    )
    assert form is not None and form.groupdict() == {
        "key": KEY,
        "old": OLD,
        "new": NEW,
        "index": "7",
    }


def test_the_items_and_the_rendered_prompts_use_those_builders() -> None:
    """What the bot attaches (discord.py) and what the hook posts (REST JSON) agree."""
    assert InterruptButton(KEY).item.custom_id == f"db:int:{KEY}"
    assert WorktreeButton("keep", KEY).item.custom_id == f"db:wt:keep:{KEY}"
    assert ArchiveButton("remove", KEY).item.custom_id == f"db:arch:remove:{KEY}"
    assert PanelButton("refresh", "0").item.custom_id == "db:panel:refresh:0"
    assert PanelSelect(2).item.custom_id == "db:panel:pick:2"
    assert FileSelect(KEY, OLD, NEW, "0").item.custom_id == f"db:rv:pick:{KEY}:{OLD}:{NEW}:0"
    assert CommentButton(KEY, OLD, NEW, "3").item.custom_id == f"db:rv:note:{KEY}:{OLD}:{NEW}:3"
    assert DraftButton("discard", KEY).item.custom_id == f"db:rv:discard:{KEY}"
    assert DropSelect(KEY).item.custom_id == f"db:rv:drop:{KEY}"
    assert views.custom_id(RID, actions.PLAN_AUTO) == f"db:p:{RID}:plan:auto"
    assert views.custom_id(RID, actions.select(0), select=True) == f"db:s:{RID}:q0"


@pytest.mark.parametrize("select", [False, True])
@pytest.mark.parametrize(
    "tail",
    [
        f"{RID}:allow",
        f"{RID}:q1:other:0.2",
        f"{RID}:" + "a" * 70,
        f"{RID}:" + "a" * 71,  # an action too long
        f"{RID}:",  # no action
        RID,
        f"{RID}:Allow",  # capitals
        f"{RID}:allow all",
        f"{RID}:allow\n",
        f"{RID}:٠",  # a digit, not an ASCII one
        f"{RID[:-1]}:allow",  # a request id too short
        f"{RID}x:allow",
        f"{RID.upper()}:allow",
        "",
    ],
)
def test_parse_prompt_reads_what_the_templates_match(select: bool, tail: str) -> None:
    """The bot reads a prompt's id without ``re`` exactly as its DynamicItems match it."""
    template = custom_ids.PROMPT_SELECT_TEMPLATE if select else custom_ids.PROMPT_BUTTON_TEMPLATE
    for prefix in (custom_ids.PROMPT_BUTTON, custom_ids.PROMPT_SELECT, "db:x:", ""):
        custom = prefix + tail
        match = re.fullmatch(template, custom)
        expected = (match["rid"], match["action"]) if match else None
        assert custom_ids.parse_prompt(custom, select=select) == expected, custom


@pytest.mark.parametrize("module", [custom_ids, actions])
def test_wire_grammars_stay_free_of_imports_for_the_hooks_fast_path(module) -> None:
    """custom_ids and prompt_actions are on the PermissionRequest hook's path: they import
    nothing (a type-checking-only import under ``if TYPE_CHECKING:`` never runs)."""
    with open(module.__file__, encoding="utf-8") as file:
        source = file.read()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations"]
