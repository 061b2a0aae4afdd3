"""Which messages are spoken prompts (transcribed) and which keep their audio as files."""

from __future__ import annotations

from types import SimpleNamespace

import discord
import pytest

from bridge.bot.voice.messages import is_audio, is_spoken


def attachment(filename: str, content_type: str | None = None, voice: bool = False):
    data = {"id": "1", "filename": filename, "size": 10, "url": "u", "proxy_url": "u"}
    if content_type:
        data["content_type"] = content_type
    if voice:
        data.update(duration_secs=1.5, waveform="AAAA")
    return discord.Attachment(data=data, state=SimpleNamespace(http=None))  # type: ignore[arg-type]


def message(content: str, *attachments, voice: bool = False) -> SimpleNamespace:
    flags = discord.MessageFlags._from_value(1 << 13 if voice else 0)
    return SimpleNamespace(content=content, attachments=list(attachments), flags=flags)


@pytest.mark.parametrize(
    ("att", "audio"),
    [
        (attachment("voice-message.ogg", "audio/ogg", voice=True), True),
        (attachment("memo.bin", "audio/mpeg"), True),
        (attachment("memo.M4A"), True),
        (attachment("notes.txt", "text/plain"), False),
        (attachment("clip.mp4", "video/mp4"), False),
    ],
)
def test_audio_is_recognised_by_voice_metadata_type_or_name(att, audio) -> None:
    assert is_audio(att) is audio


def test_voice_messages_and_audio_without_text_are_spoken() -> None:
    voice = attachment("voice-message.ogg", "audio/ogg", voice=True)
    assert is_spoken(message("", voice, voice=True))
    assert is_spoken(message("", attachment("a.ogg"), attachment("b.mp3")))


def test_audio_with_text_or_other_files_stays_an_attachment() -> None:
    assert not is_spoken(message("transcode this", attachment("a.ogg")))
    assert not is_spoken(message("", attachment("a.ogg"), attachment("b.txt")))
    assert not is_spoken(message("just text"))
