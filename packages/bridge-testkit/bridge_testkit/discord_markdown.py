"""How Discord's client reads code blocks in a message, for asserting what a user sees.

Discord's rule is simpler than CommonMark's: a block opened by three backticks ends at the
next three backticks, wherever they stand (mid-line, inside a longer run, right after the
opener). An opener that is never closed is shown as plain text. Everything outside closed
blocks renders as Markdown: masked links, mentions, headings.
"""

from __future__ import annotations

FENCE = "```"


def split_code(text: str) -> tuple[list[str], str]:
    """``(the insides of the code blocks, the text outside them)`` as Discord renders
    ``text``. The insides keep the opener's language line (``diff\\n…``)."""
    blocks: list[str] = []
    outside: list[str] = []
    at = 0
    while True:
        start = text.find(FENCE, at)
        end = text.find(FENCE, start + len(FENCE)) if start >= 0 else -1
        if end < 0:
            outside.append(text[at:])
            return blocks, "".join(outside)
        outside.append(text[at:start])
        blocks.append(text[start + len(FENCE) : end])
        at = end + len(FENCE)


def outside_code(text: str) -> str:
    """What of ``text`` Discord renders as Markdown (not inside a code block)."""
    return split_code(text)[1]
