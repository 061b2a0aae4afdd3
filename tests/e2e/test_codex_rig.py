"""The Codex rig itself: when Codex exits at the hooks review (its input drain overran, as it
does on a starved machine: docs/codex.md), the rig starts it again and answers the review there.
A stand-in program plays that Codex: the first start dies at the dialog, the second shows it,
takes a key and shows the input box."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge_testkit.codex_rig import DRAIN_DEATH, CodexRig
from fake_openai import FakeOpenAI

STAND_IN = """#!/bin/sh
review() {{ printf 'Hooks need review\\n  2. Trust all and continue\\n  enter confirm\\n'; }}
if [ ! -e "$HOME/died" ]; then
  : > "$HOME/died"; {first_words}; exit 1
fi
review
stty raw -echo; key=$(dd bs=1 count=1 2>/dev/null); stty sane
printf '\\033[2J\\033[H\u203a Ask Codex to do anything\\n'
printf '%s' "$key" > "$HOME/key"
exec sleep 600
"""


@pytest.mark.parametrize(
    "first_words",
    [
        f"review; echo 'Error: {DRAIN_DEATH}'",
        # what tmux 3.3a kept, 17 times in 400, of a program that printed that and exited at once
        ":",
    ],
    ids=["its-error-shown", "nothing-kept"],
)
def test_codex_exiting_at_the_hooks_review_is_started_again(
    tmp_path: Path, first_words: str
) -> None:
    program = tmp_path / "codex-stand-in"
    program.write_text(STAND_IN.format(first_words=first_words))
    program.chmod(0o755)
    with FakeOpenAI() as fake, CodexRig(tmp_path, fake, binary=program) as codex:
        codex.start()
        codex.trust_hooks()

        assert (codex.home / "died").exists()  # the first start did exit at the dialog
        assert (codex.home / "key").read_text() == "2"  # the second took "Trust all"
        assert "Hooks need review" not in codex.screen()
