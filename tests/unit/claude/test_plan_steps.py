"""A plan's steps (bridge/claude/plan_steps.py): what the plan prompt numbers, as the plan is
written; what a note on a step quotes back; the plan approved with notes."""

from __future__ import annotations

from bridge.claude import plan_steps
from bridge.claude.plan_steps import HEADING, ITEM, PARAGRAPH

PLAN = """# Plan: add README

Context here,
more context.

## Steps
1. Add README.md with usage
   more on it
2) Add tests
   - unit tests
   * e2e tests

```sh
# not a heading
- not an item
```

---
> a quote
| a | b |

Done.
"""


def test_headings_items_and_paragraphs_are_steps_in_the_order_written() -> None:
    found = [(s.number, s.kind, s.text) for s in plan_steps.steps(PLAN)]
    assert found == [
        (1, HEADING, "Plan: add README"),
        (2, PARAGRAPH, "Context here, more context."),
        (3, HEADING, "Steps"),
        (4, ITEM, "Add README.md with usage more on it"),
        (5, ITEM, "Add tests"),
        (6, ITEM, "unit tests"),
        (7, ITEM, "e2e tests"),
        (8, PARAGRAPH, "a quote | a | b |"),
        (9, PARAGRAPH, "Done."),
    ]
    assert plan_steps.count(PLAN) == 9


def test_the_numbers_go_in_front_of_each_steps_text_keeping_its_markdown() -> None:
    shown = plan_steps.numbered(PLAN).splitlines()
    assert shown[0] == "# **[1]** Plan: add README"
    assert shown[2:4] == ["**[2]** Context here,", "more context."]
    assert shown[5:11] == [
        "## **[3]** Steps",
        "1. **[4]** Add README.md with usage",
        "   more on it",
        "2) **[5]** Add tests",
        "   - **[6]** unit tests",
        "   * **[7]** e2e tests",
    ]
    assert "# not a heading" in shown and "- not an item" in shown  # code stays code
    assert "> **[8]** a quote" in shown and "**[9]** Done." in shown


def test_what_is_not_a_step() -> None:
    for text in ("", "\n\n", "---\n***\n_ _ _\n", "```\n# code\n```\n", "#nospace\n"):
        steps = plan_steps.steps(text)
        assert [s.kind for s in steps] == ([PARAGRAPH] if text == "#nospace\n" else []), text
    bare = plan_steps.steps("-\n1.\n#\n")  # markers with nothing after: one paragraph
    assert [(s.kind, s.text) for s in bare] == [(PARAGRAPH, "- 1. #")]
    assert [s.kind for s in plan_steps.steps("    # indented four: a paragraph")] == [PARAGRAPH]
    assert [s.kind for s in plan_steps.steps("1234567890. too many digits")] == [PARAGRAPH]


def test_notes_on_steps_quote_each_step_in_the_plans_order() -> None:
    feedback = plan_steps.feedback(PLAN, [(5, " also e2e \n"), (2, "shorter"), (42, "gone")])
    assert feedback == (
        "Notes on the plan, by step (each quotes the step it is about):\n\n"
        "Step 2: “Context here, more context.”\nshorter\n\n"
        "Step 5: “Add tests”\nalso e2e\n\n"
        "Step 42: “”\ngone"
    )
    long = plan_steps.feedback("- " + "word " * 100, [(1, "x")])
    assert "“" + ("word " * 40)[:199] + "…”" in long


def test_a_plan_approved_with_notes_is_the_plan_then_the_notes() -> None:
    assert plan_steps.with_notes("# Plan\n\n1. A\n\n", "  keep the API \n") == (
        "# Plan\n\n1. A\n\n## Notes from the review\n\nkeep the API\n"
    )
