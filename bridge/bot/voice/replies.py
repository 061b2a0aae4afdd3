"""Replies you can listen to: a reply also sent back as a Discord voice message.

When a session's last prompt came as a voice message (``voice.replies: "voice"``, the
default) or always (``"always"``), the reply, once its text is posted, is read aloud by a
local engine (``bridge.voice.tts``: Piper when installed, else espeak-ng) and posted as a
voice message (flags IS_VOICE_MESSAGE, one Ogg/Opus file with its duration and waveform).
Only its prose is read (``bridge.voice.prose``: code blocks, tables and lists of files are
named, a long reply cut to its first paragraphs within ``voice.maxReplySeconds``, the audio
stopped there whatever the text).

The seam: the Stop hook hands the reply's text to the bot with its last post
(``Post.speech``); the outbox drainer calls :meth:`VoiceReplies.after_reply` once that post
is made. Speaking runs in a task of its own on the voice worker thread: the text reply
never waits for it, and a failure is logged (with one short note per channel at most),
never lost text. A reply a hook posted itself (no bot listening, or the bot did not take it
in time) is not spoken.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from bridge.bot import courier
from bridge.bot.voice.messages import _WORKER
from bridge.config import BridgeConfig
from bridge.discord.post import NO_MENTIONS, DeliveryError, Post
from bridge.discord.render.attachments import extract_markers
from bridge.voice import prose, tts

log = logging.getLogger(__name__)

IS_VOICE_MESSAGE = 1 << 13  # message flag
FILENAME = "voice-message.ogg"
NOTE = "🔇 This reply could not be spoken: {why}. (This note is shown once.)"


class VoiceReplies:
    """Which sessions' replies are spoken, and speaking them."""

    def __init__(self, cfg: BridgeConfig) -> None:
        self.cfg = cfg
        self._voiced: set[str] = set()  # channels whose last prompt came as voice
        self._noted: set[str] = set()  # channels told once that speaking failed
        self._tasks: set[asyncio.Task] = set()

    def prompted(self, channel: str, spoken: bool) -> None:
        """A prompt was typed into ``channel``'s session; ``spoken``: it came as voice."""
        if spoken:
            self._voiced.add(channel)
        else:
            self._voiced.discard(channel)

    def wanted(self, channel: str) -> bool:
        mode = self.cfg.voice.replies
        return mode == "always" or (mode == "voice" and channel in self._voiced)

    def after_reply(
        self, http: discord.http.HTTPClient | None, channel: str, speech: str, reply: dict
    ) -> None:
        """The reply's last message was posted: speak it in the background when wanted."""
        if http is None or not speech.strip() or not self.wanted(channel):
            return
        task = asyncio.create_task(self._speak(http, channel, speech, reply))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _speak(
        self, http: discord.http.HTTPClient, channel: str, speech: str, reply: dict
    ) -> None:
        body, _files = extract_markers(speech)  # attachment markers: not prose
        seconds = self.cfg.voice.max_reply_seconds  # the text is cut to it, the audio stopped
        text = prose.spoken(body, seconds)
        if not text.strip():
            return
        loop = asyncio.get_running_loop()
        try:
            clip = await loop.run_in_executor(_WORKER, tts.speak, text, seconds)
            await courier.create_message(http, channel, voice_post(clip))
        except Exception as err:  # never the text's problem: it is posted already
            log.warning("could not speak the reply %s in #%s: %s", reply.get("id"), channel, err)
            await self._note(http, channel, err)
            return
        log.info(
            "spoke the reply %s in #%s (%.1f s, %d words)",
            reply.get("id"),
            channel,
            clip.duration,
            len(text.split()),
        )

    async def _note(self, http: discord.http.HTTPClient, channel: str, err: Exception) -> None:
        if channel in self._noted:
            return
        self._noted.add(channel)
        why = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        note = Post({"content": NOTE.format(why=why), "allowed_mentions": NO_MENTIONS})
        try:
            await courier.create_message(http, channel, note)
        except DeliveryError as failed:
            log.warning("could not post the note in #%s: %s", channel, failed)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def voice_post(clip: tts.VoiceClip) -> Post:
    """A voice message as Discord takes one: flags IS_VOICE_MESSAGE, no text, one Ogg/Opus
    attachment with ``duration_secs`` and ``waveform``."""
    payload = {
        "flags": IS_VOICE_MESSAGE,
        "attachments": [clip.attachment(0, FILENAME)],
        "allowed_mentions": NO_MENTIONS,
    }
    return Post(payload, [(FILENAME, clip.data)])
