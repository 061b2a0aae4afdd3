"""Replies read aloud: what of a reply is spoken, and the voice message it becomes."""

from __future__ import annotations

import base64
import json
import math
from array import array

import pytest

from bridge.bot.voice.replies import IS_VOICE_MESSAGE, VoiceReplies, voice_post
from bridge.config.model import VoiceSettings
from bridge.discord.post import multipart
from bridge.voice import opus, prose, tts

REPLY = """I fixed the **failing test** in `parser.py`; see [the docs](https://example.com/x).

```python
def parse(text):
    return text.split()
```

| test | before | after |
|------|--------|-------|
| parse | fail | pass |

Files changed:
- bridge/parser.py
- tests/test_parser.py — new case
- README.md

Next steps:
- run the whole suite
- **release** it

-# Opus 4.5 · ctx 12% · $0.43"""


def test_prose_names_code_blocks_tables_and_file_lists_and_drops_markdown() -> None:
    assert prose.prose(REPLY).split("\n\n") == [
        "I fixed the failing test in parser.py; see the docs.",
        "(a code block)",
        "(a table)",
        "Files changed:",
        "(a list of files)",
        "Next steps:",
        "run the whole suite.",
        "release it.",
    ]  # the footer's small print is not read


def test_bare_links_mentions_and_unclosed_fences_are_not_read_out() -> None:
    text = "Look at https://example.com/a?b=c now <@123>.\n\n```\nnever closed"
    assert prose.prose(text).split("\n\n") == ["Look at (a link) now .", "(a code block)"]


def test_a_long_reply_is_cut_to_its_first_paragraphs_within_the_time() -> None:
    words = " ".join(["word"] * 40)  # 16 s at 150 words a minute
    text = "\n\n".join([words, words, words])
    assert prose.within(text, 32) == "\n\n".join([words, words])  # 80 words ≤ 32 s
    assert prose.within(text, 31) == words
    cut = prose.within(words, 4)  # a first paragraph too long on its own: cut at a word
    assert cut == " ".join(["word"] * 10) + " …"
    assert prose.spoken("Hello.\n\n```\nx\n```", 60) == "Hello.\n\n(a code block)"


def sine(seconds: float, rate: int = 16000, loud_from: float = 0.5) -> bytes:
    """Quiet for ``loud_from`` of the time, then a loud 440 Hz tone."""
    count = int(seconds * rate)
    return array(
        "h",
        (
            int((2000 if i < count * loud_from else 20000) * math.sin(2 * math.pi * 440 * i / rate))
            for i in range(count)
        ),
    ).tobytes()


def test_encoded_clip_is_ogg_opus_with_its_duration_and_waveform() -> None:
    pytest.importorskip("av")
    clip = opus.encode([sine(2.0)], 16000)
    assert clip.data.startswith(b"OggS") and b"OpusHead" in clip.data[:100]
    assert clip.duration == pytest.approx(2.0)
    levels = base64.b64decode(clip.waveform)
    assert len(levels) == 20  # one a tenth of a second
    assert max(levels) == 255 and levels[0] < 40 < levels[-1]  # quiet, then loud


def test_waveform_is_at_most_256_bytes_however_long_the_audio() -> None:
    clip = opus.encode([sine(60.0, rate=1000)], 1000)
    levels = base64.b64decode(clip.waveform)
    assert len(levels) == 256 and levels[0] < 40 < levels[-1] == 255
    assert len(clip.waveform) <= 400  # the spec's limit for the field
    assert base64.b64decode(opus.waveform([])) == b"\0"  # silence: one flat bar


def test_a_voice_post_is_one_ogg_file_flagged_with_its_metadata_and_no_text() -> None:
    clip = tts.VoiceClip(b"OggS...", 2.345, "AAEC")
    post = voice_post(clip)
    payload_json, parts = multipart(post)
    payload = json.loads(payload_json)
    assert payload["flags"] == IS_VOICE_MESSAGE and "content" not in payload
    assert payload["attachments"] == [
        {"id": 0, "filename": "voice-message.ogg", "duration_secs": 2.35, "waveform": "AAEC"}
    ]
    assert parts == [("files[0]", "voice-message.ogg", b"OggS...")]


class _Cfg:
    def __init__(self, replies: str) -> None:
        self.voice = VoiceSettings({"replies": replies})


def test_replies_are_spoken_after_voice_prompts_always_or_never() -> None:
    after_voice = VoiceReplies(_Cfg("voice"))  # type: ignore[arg-type]
    after_voice.prompted("1", spoken=True)
    after_voice.prompted("2", spoken=True)
    after_voice.prompted("2", spoken=False)  # a typed prompt since: its reply is read
    assert (after_voice.wanted("1"), after_voice.wanted("2"), after_voice.wanted("3")) == (
        True,
        False,
        False,
    )
    assert VoiceReplies(_Cfg("always")).wanted("3")  # type: ignore[arg-type]
    never = VoiceReplies(_Cfg("never"))  # type: ignore[arg-type]
    never.prompted("1", spoken=True)
    assert not never.wanted("1")


def test_espeak_reads_text_that_looks_like_an_option() -> None:
    """The text goes on stdin: a reply starting with a dash is spoken, not an option."""
    if tts.engine_name() != "espeak-ng":
        pytest.skip("espeak-ng is not the engine here")
    pytest.importorskip("av")
    clip = tts.speak("--help me please", 60)
    assert clip.duration > 0.5
