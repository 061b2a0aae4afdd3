"""A diff on Discord: inline code blocks that nothing in the diff can break, or a file."""

from __future__ import annotations

import re

from bridge.discord.render.diff_view import defuse, file_listing, render
from bridge.discord.render.split import DISCORD_MESSAGE_LIMIT
from bridge.sessions.tree_diff import FileChange
from bridge_testkit.discord_markdown import outside_code, split_code

FENCE = re.compile(r"(?<!`)```(?!`)")


def test_a_short_diff_is_one_diff_block_whose_own_fences_are_defused() -> None:
    diff = "--- a/x.md\n+++ b/x.md\n@@ -1 +1,3 @@\n+```\n+@everyone <@123>\n+```python\n"
    view = render("📝 1 file changed, +3 −0", [FileChange("x.md", 3, 0)], diff)
    assert view.file is None and len(view.messages) == 1
    text = view.messages[0]
    assert text.startswith("📝 1 file changed, +3 −0\n```diff\n--- a/x.md")
    assert len(FENCE.findall(text)) == 2 and text.endswith("\n```")
    assert "@everyone <@123>" in text  # shown as code; sent with no mentions allowed


def test_a_longer_diff_is_split_like_a_reply_with_the_fence_reopened() -> None:
    diff = "".join(f"+line {i} " + "x" * 60 + "\n" for i in range(80))
    view = render("title", [FileChange("big.txt", 80, 0)], diff, inline_messages=4)
    assert view.file is None and 2 <= len(view.messages) <= 4
    for chunk in view.messages:
        assert len(chunk) <= DISCORD_MESSAGE_LIMIT
        assert len(FENCE.findall(chunk)) % 2 == 0, chunk
    assert view.messages[1].startswith("```diff\n")


def test_a_long_diff_becomes_a_file_with_a_per_file_summary() -> None:
    diff = "".join(f"+{i}\n" for i in range(5000))
    files = [
        FileChange("a.py", 4990, 2),
        FileChange("img.png", None, None),
        FileChange("we```ird\n.txt", 1, 1),
    ]
    view = render("📝 3 files changed", files, diff, cut=True, name="turn-abc")
    assert view.file == ("turn-abc.diff", diff.encode())
    (text,) = view.messages
    assert "The diff was cut" in text and "`turn-abc.diff`" in text
    assert "+4990 −2  a.py" in text and "binary  img.png" in text
    assert len(FENCE.findall(text)) == 2 and "we`\u200b`\u200b`ird?.txt" in text


def test_the_listing_is_bounded() -> None:
    files = [FileChange(f"dir/file-{i}.txt", i, 0) for i in range(500)]
    listing = file_listing(files)
    assert len(listing) < DISCORD_MESSAGE_LIMIT and listing.endswith("more\n```")
    assert defuse("a````b") == "a`\u200b`\u200b`\u200b`b"


LINK = "[click me](https://evil.example/x)"


def test_no_run_of_backticks_ends_the_block_by_discords_rule() -> None:
    """Discord ends a block at the next three backticks wherever they stand: a run of 3 to
    12 in the repository's text, at the start, middle or end of a line, must not."""
    for n in range(3, 13):
        run = "`" * n
        for text in (f"{run}\n{LINK}\n{run}", f"+x{run}{LINK}{run}x", f"{LINK}{run}", run):
            body = f"```diff\n{defuse(text)}\n```"
            blocks, outside = split_code(body)
            assert outside == "" and len(blocks) == 1, (n, text, body)
            assert defuse(text).replace("\u200b", "") == text  # nothing but the breaks added


def test_a_diff_full_of_backtick_runs_keeps_every_line_inside_its_blocks() -> None:
    lines = "".join(f"+{'`' * (3 + i % 10)} {LINK} {i}\n" for i in range(120))
    diff = f"--- a/x.md\n+++ b/x.md\n@@ -0,0 +1,120 @@\n{lines}"
    view = render("📝 1 file changed, +120 −0", [FileChange("x.md", 120, 0)], diff)
    assert view.file is None and len(view.messages) > 1
    for chunk in view.messages:
        assert LINK not in outside_code(chunk), chunk
    shown = "".join("".join(split_code(chunk)[0]) for chunk in view.messages)
    assert shown.count("evil.example") == 120
