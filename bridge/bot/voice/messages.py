"""Voice messages → a transcript typed as the prompt (``bridge/voice`` does the audio).

A Discord voice message, or a message of audio files and no text, from someone allowed to
drive the session (``bot/turn/relay.py`` checks that first) is downloaded the way other attachments
are (same size cap), refused with a reply past ``voice.maxSeconds``, decoded and transcribed on
one worker thread (off the event loop; one voice message at a time in the process), echoed in
the channel as ``🎙️ <transcript>`` (no mentions) and handed back to the relay, which types it
like a text message. Without an engine installed, a reply says how to install one: never a
silent drop. The audio file is deleted once transcribed. A message with text keeps its audio
files as ordinary attachments.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import discord

from bridge.bot.downloads import save_attachments
from bridge.config import BridgeConfig
from bridge.config.model import VoiceSettings
from bridge.discord.render.split import split_message
from bridge.sessions.targets import SessionTarget
from bridge.state import runtime
from bridge.voice import audio, engines

log = logging.getLogger(__name__)

MARK = "🎙️"
AUDIO_EXTENSIONS = (".ogg", ".oga", ".opus", ".mp3", ".wav", ".m4a", ".flac", ".webm", ".aac")
LOAD_NOTICE_AFTER = 3.0  # seconds: a model that takes longer to load gets a note in the channel
# One thread for the whole process (every server's relay): an engine is used by one thread at
# a time, and two transcriptions at once would only slow both (and the bot) on a small machine.
# Niced: a transcription is seconds of CPU beside the event loop's thread, and at load 15 a
# CI run saw the loop 2.8 s late while one ran (the process had used 1.2 s of CPU meanwhile).
VOICE_NICE = 10


def _lower_priority() -> None:
    """On Linux a thread has a nice value of its own (``setpriority`` with its thread id)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), VOICE_NICE)
    except (OSError, AttributeError):  # not Linux: the thread runs at the bot's priority
        pass


_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voice", initializer=_lower_priority)


def is_audio(attachment: discord.Attachment) -> bool:
    content_type = (attachment.content_type or "").split(";")[0].strip().lower()
    return (
        attachment.is_voice_message()
        or content_type.startswith("audio/")
        or attachment.filename.lower().endswith(AUDIO_EXTENSIONS)
    )


def is_spoken(message: discord.Message) -> bool:
    """A voice message, or only audio files and no text: transcribed, not attached."""
    if not message.attachments:
        return False
    if message.flags.voice:
        return True
    return not message.content.strip() and all(is_audio(a) for a in message.attachments)


class VoicePrompts:
    def __init__(self, cfg: BridgeConfig, http: aiohttp.ClientSession, rt: runtime.Runtime):
        self.cfg = cfg
        self.http = http
        self.runtime = rt
        self._worker = _WORKER

    @property
    def settings(self) -> VoiceSettings:
        return self.cfg.voice

    async def transcript(self, message: discord.Message, target: SessionTarget) -> str | None:
        """The words spoken in ``message``'s audio, echoed in the channel; None (after a
        reply saying why) when there is nothing to type."""
        limit = self.settings.max_seconds  # for the whole message, however many files
        claimed = sum(a.duration or 0.0 for a in message.attachments)
        if claimed > limit:  # Discord's own figure: refused before the download
            await _reply(message, _too_long(f"it is {claimed:.0f} s long", limit))
            return None
        try:
            engine = await self._engine(message)
        except engines.EngineUnavailable as err:
            log.warning("voice message %s not transcribed: %s", message.id, err)
            await _reply(message, _how_to_enable(err))
            return None
        except Exception as err:  # e.g. the model could not be fetched
            log.exception("could not load the %s speech engine", self.settings.engine)
            what = f"could not load the {self.settings.engine} model `{self.settings.model}`"
            await _reply(message, f"⚠️ Voice message not transcribed: {what}: {_short(err)}")
            return None
        directory = self.runtime.channel_dir("uploads", target.key)
        paths, failures = await save_attachments(
            self.http, message, directory, self.cfg.download_limit
        )
        if failures:
            await _reply(message, "⚠️ Not downloaded: " + "; ".join(failures))
            _remove(paths)
            return None
        texts, heard, refusal = [], 0.0, ""
        try:
            for path in paths:  # each file gets what the ones before it left of the limit
                text, seconds = await self._transcribe(engine, path, limit - heard, message)
                texts.append(text)
                heard += seconds
        except audio.TooLong:
            refusal = _too_long("it is longer than that", limit)
        except audio.AudioError as err:
            refusal = f"⚠️ Voice message not transcribed: {err}"
        finally:
            _remove(paths)  # before anything is said: no file outlives the answer
        if refusal:
            await _reply(message, refusal)
            return None
        text = " ".join(t for t in texts if t).strip()
        if not text:
            await _reply(message, f"{MARK} No words recognised in the audio: nothing typed.")
            return None
        await _echo(message, text)
        return text

    async def _engine(self, message: discord.Message) -> engines.Engine:
        loop = asyncio.get_running_loop()
        loading = loop.run_in_executor(self._worker, self._load)
        if not engines.is_loaded(self.settings):
            done, _ = await asyncio.wait({loading}, timeout=LOAD_NOTICE_AFTER)
            if not done:
                what = f"the {self.settings.engine} speech model `{self.settings.model}`"
                await _reply(message, f"{MARK} Loading {what} (fetched once on first use)…")
        return await loading

    def _load(self) -> engines.Engine:
        audio.require_decoder()
        return engines.load(self.settings)

    async def _transcribe(
        self, engine: engines.Engine, path: str, max_seconds: float, message: discord.Message
    ) -> tuple[str, float]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._worker, self._run, engine, path, max_seconds, message.id
        )

    def _run(
        self, engine: engines.Engine, path: str, max_seconds: float, message_id: int
    ) -> tuple[str, float]:
        """The file's words and its length in seconds."""
        started = time.monotonic()
        pcm = audio.decode(path, max_seconds)
        text = engine.transcribe(pcm)
        log.info(
            "transcribed %.1f s of message %s with %s in %.1f s (%d chars)",
            audio.seconds(pcm),
            message_id,
            engine.name,
            time.monotonic() - started,
            len(text),
        )
        return text, audio.seconds(pcm)


def _how_to_enable(err: engines.EngineUnavailable) -> str:
    script = f" (or `{engines.INSTALL_SCRIPT}`)" if err.how == engines.INSTALL else ""
    return (
        f"{MARK} Voice messages are not transcribed on this machine: {err}. To enable them, "
        f"install the voice extra where the bridge runs: `{err.how}`{script}, then restart the "
        "bot. Nothing was typed."
    )


def _too_long(what: str, limit: float) -> str:
    return (
        f"{MARK} Voice message not transcribed: {what}, and the limit is {limit:g} s "
        "(`voice.maxSeconds` in the config). Nothing was typed."
    )


async def _echo(message: discord.Message, text: str) -> None:
    """What Claude gets, shown first; never a mention (the text is what was heard)."""
    for chunk in split_message(f"{MARK} {text}"):
        try:
            await message.reply(
                chunk, mention_author=False, allowed_mentions=discord.AllowedMentions.none()
            )
        except discord.HTTPException as err:
            log.warning("could not echo the transcript of %s: %s", message.id, err)
            return


def _remove(paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _short(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]


async def _reply(message: discord.Message, text: str) -> None:
    try:
        await message.reply(
            text, mention_author=False, allowed_mentions=discord.AllowedMentions.none()
        )
    except discord.HTTPException as err:
        log.warning("could not reply to %s: %s", message.id, err)
