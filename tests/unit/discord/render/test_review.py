"""A review as Discord shows it and as Claude reads it: the file select's pages, a file's
numbered lines, the draft message within 2,000 characters, and the one prompt."""

from __future__ import annotations

import re

from bridge.discord.render import review
from bridge.discord.render.split import DISCORD_MESSAGE_LIMIT
from bridge.sessions.review_files import CommentNow
from bridge.sessions.tree_diff import FileChange
from bridge.state.review_drafts import Comment
from bridge_testkit.discord_markdown import outside_code


def note(path: str, start: int, end: int, text: str) -> Comment:
    return Comment("abcdef", path, start, end, text, "0" * 40)


def test_files_are_offered_25_a_page_with_their_counts() -> None:
    files = [FileChange(f"src/f{i:02}.py", i, 1) for i in range(30)]
    files.append(FileChange("a.png", None, None))
    assert review.pages(len(files)) == 2
    first = review.file_options(files, 0)
    assert len(first) == 25 and first[0] == ("src/f00.py", "0", "+0 −1")
    second = review.file_options(files, 1)
    assert [value for _, value, _ in second] == [str(i) for i in range(25, 31)]
    assert second[-1] == ("a.png", "30", "binary")
    deep = "/".join(["folder"] * 30) + "/file.py"
    ((label, _, _),) = review.file_options([FileChange(deep, 1, 0)], 0)
    assert len(label) == 100 and label.startswith("…") and label.endswith("/file.py")


def test_a_files_lines_are_shown_in_blocks_or_attached_when_long() -> None:
    short = review.file_view("app.py", "+1 −0", ["@@ -1 +1,2 @@", " 1 │ a", "+2 │ b"], 4)
    assert short.file is None and len(short.messages) == 1
    assert "```diff\n@@ -1 +1,2 @@\n 1 │ a\n+2 │ b\n```" in short.messages[0]
    assert "**Comment…** takes one (`12`) or a range (`12-18`)" in short.messages[0]
    many = [f"+{i:>4} │ line {i} " + "x" * 60 for i in range(1, 400)]
    long = review.file_view("deep/app.py", "+399 −0", many, 2)
    assert long.file is not None and long.file[0] == "app.py.diff.txt"
    assert len(long.messages) == 1 and len(long.messages[0]) <= DISCORD_MESSAGE_LIMIT
    assert "attached as `app.py.diff.txt`" in long.messages[0]
    binary = review.file_view("logo.png", "binary", [], 4, "logo.png is binary: no lines.")
    assert binary.messages == ["💬 `logo.png` · binary\nlogo.png is binary\\: no lines."]


def test_what_the_repository_holds_stays_inside_code() -> None:
    """A file named with backticks, a line holding a fence: neither escapes its code span or
    block, so no Markdown, link or mention of the repository's takes effect."""
    shown = review.file_view("a``` @everyone.py", "+1 −0", ["+1 │ ``` [x](https://e.example)"], 4)
    rendered = re.sub(r"`[^`]*`", "", outside_code(shown.messages[0]))  # code spans too
    assert "@everyone" not in rendered and "https://e.example" not in rendered
    label = review.comment_label(note("``@here`` [y](https://e.example)", 1, 1, "x"), True)
    assert re.sub(r"`[^`]*`", "", label) == " 1", label


def test_the_draft_message_lists_every_comment_within_discords_limit() -> None:
    few = [note("app.py", 3, 4, "use *logging*\nnot print"), note("a.py", 7, 7, "[x](http://y)")]
    text = review.draft_content(few, 2)
    assert text.startswith("📝 **Draft review** · 2 comments on 2 files")
    assert "1. `app.py` 3–4 — use \\*logging\\* not print" in text
    assert "2. `a.py` 7 — \\[x\\](http\\://y)" in text
    many = [note(f"src/module_{i}.py", i, i + 5, "a long comment " * 20) for i in range(50)]
    text = review.draft_content(many, 50)
    assert len(text) <= DISCORD_MESSAGE_LIMIT and text.rstrip().endswith("more")
    sent = review.sent_content(many, 50, "alice_", "review-1.md")
    assert sent.startswith("✅ **Review sent** to Claude by alice\\_: 50 comments on 50 files")
    assert "(in `review-1.md`)" in sent and len(sent) <= DISCORD_MESSAGE_LIMIT


def test_the_prompt_quotes_each_comments_lines_as_they_are_now() -> None:
    items = [
        CommentNow(
            "app.py", 4, 5, ["print(3)", "\tprint(4)"], "use logging\nplease", moved_from=(3, 4)
        ),
        CommentNow(
            "notes.txt",
            2,
            2,
            ["BETA?"],
            "shout",
            moved_from=(2, 2),
            changed=True,
            was=["beta"],
            was_start=2,
        ),
        CommentNow("gone.py", 1, 1, [], "why?", gone=True, was=["x = 1"], was_start=1),
        CommentNow("cut.py", 7, 7, [], "keep it", removed=True, was=["y = 2"], was_start=9),
        CommentNow("big.py", 1, 30, [f"line {i}" for i in range(1, 31)], "split"),
    ]
    prompt = review.review_prompt(items)
    assert prompt.startswith("Review of your changes: 5 comments on 5 files. Please address")
    assert (
        "1. app.py, lines 4-5 (lines 3-4 when commented):\n   4 | print(3)\n"
        "   5 |     print(4)\n   Comment: use logging\n   please"
    ) in prompt
    assert (
        "2. notes.txt, line 2 (changed since this comment was written):\n   2 | BETA?\n"
        "   When commented, they read:\n   2 | beta\n   Comment: shout"
    ) in prompt
    assert "3. gone.py (this file no longer exists; the comment was on these lines):\n" in prompt
    assert "4. cut.py, around line 7 (the lines this comment was on were removed" in prompt
    assert "   9 | y = 2" in prompt
    assert "   20 | line 20\n   … (10 more lines)\n   Comment: split" in prompt
    pointer = review.pointer_prompt("/up/review-1.md", 30, 7)
    assert "30 comments on 7 files, written out in /up/review-1.md" in pointer


def test_a_modal_title_keeps_the_end_of_a_long_path() -> None:
    assert review.modal_title("app.py") == "Comment on app.py"
    title = review.modal_title("src/very/deep/folder/structure/module_name.py")
    assert len(title) == review.TITLE_LIMIT and title.startswith("Comment on …")
    assert title.endswith("module_name.py")
