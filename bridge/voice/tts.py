"""Text → a Discord voice message: a local speech engine, bounded, encoded as it speaks.

Engines, best first: Piper (``piper-tts``, natural voices; its voice model is fetched from
Hugging Face on first use, then cached) when installed, else espeak-ng (a Debian package,
robotic but small and everywhere). Both run on this machine: nothing said leaves it. The
text is the model's: control characters are taken out before an engine sees it (espeak-ng
obeys commands embedded after a Ctrl+A: speed, pitch, volume), it is cut to
``prose.CHARS_PER_SECOND`` a second of the budget, and the engine is stopped once it has
made ``max_seconds`` of audio, which is encoded as it comes (``bridge.voice.opus``): text
with few spaces (CJK, a long number) speaks far longer than its words suggest.
Blocking: call it off the event loop.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import IO

from bridge.voice.opus import VoiceClip, encode
from bridge.voice.prose import CHARS_PER_SECOND

__all__ = ["SpeechUnavailable", "VoiceClip", "engine_name", "speak", "speakable"]

log = logging.getLogger(__name__)

ESPEAK_VOICE = "en-us+f2"  # the voice pocketsphinx, the tests' recogniser, hears best
ESPEAK_SPEED = 160  # words per minute (prose.WORDS_PER_MINUTE)
PIPER_VOICE = "en_US-lessac-medium"
PIPER_REPO = "rhasspy/piper-voices"
# Seconds for espeak-ng to say and PyAV to encode a reply: 120, and a tenth of the budget
# more (an hour of CJK, the longest budget, took 43 s on the 2-core machine, quiet).
SPEAK_TIMEOUT = 120
CHUNK = 32 * 1024  # bytes of audio read from espeak-ng at a time (0.7 s)

# C0 and C1 control characters, DEL: none is text, and espeak-ng obeys Ctrl+A commands. A
# newline stays (a blank line is a paragraph's pause); other white space becomes a space.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_BLANK_CONTROL = re.compile(r"[\t\r\v\f\x1c-\x1f\x85]")


class SpeechUnavailable(Exception):
    """No speech engine on this machine; ``str()`` says how to install one."""


def engine_name() -> str:
    """The engine :func:`speak` would use: ``piper`` or ``espeak-ng``."""
    if _has_piper():
        return "piper"
    if shutil.which("espeak-ng"):
        return "espeak-ng"
    raise SpeechUnavailable(
        "no speech engine is installed (`pip install piper-tts` or `apt install espeak-ng`)"
    )


def speakable(text: str, max_seconds: float) -> str:
    """``text`` as an engine may see it: no control characters, at most
    ``CHARS_PER_SECOND`` a second of ``max_seconds``."""
    text = _CONTROL.sub("", _BLANK_CONTROL.sub(" ", text))
    return text[: max(1, int(max_seconds * CHARS_PER_SECOND))]


def speak(text: str, max_seconds: float) -> VoiceClip:
    """``text`` spoken and encoded as a voice message of at most ``max_seconds``. Piper's
    voice that cannot be fetched (Hugging Face unreachable) or loaded falls back to
    espeak-ng when it is there."""
    text = speakable(text, max_seconds)
    if engine_name() == "piper":
        try:
            return _piper(text, max_seconds)
        except Exception as err:
            if not shutil.which("espeak-ng"):
                raise
            log.warning("Piper could not speak (%s); espeak-ng speaks instead", err)
    return _espeak(text, max_seconds)


def _has_piper() -> bool:
    try:
        import piper  # noqa: F401
    except ImportError:
        return False
    return True


_piper_voice = None


def _piper(text: str, max_seconds: float) -> VoiceClip:
    """Piper's voice (loaded once; its model fetched on first use) saying ``text``, a
    sentence at a time, until ``max_seconds`` of it."""
    global _piper_voice
    if _piper_voice is None:
        from huggingface_hub import hf_hub_download
        from piper import PiperVoice

        lang, name, quality = PIPER_VOICE.split("-")
        folder = f"{lang.split('_')[0]}/{lang}/{name}/{quality}/"
        model = hf_hub_download(PIPER_REPO, folder + PIPER_VOICE + ".onnx")
        hf_hub_download(PIPER_REPO, folder + PIPER_VOICE + ".onnx.json")
        _piper_voice = PiperVoice.load(model)
    voice = _piper_voice
    if hasattr(voice, "synthesize_wav"):  # piper-tts 1.3 and later: an AudioChunk a sentence
        chunks: Iterator[bytes] = (part.audio_int16_bytes for part in voice.synthesize(text))
    else:  # piper-tts 1.2: raw s16 bytes a sentence
        chunks = iter(voice.synthesize_stream_raw(text))
    try:
        return encode(chunks, int(voice.config.sample_rate), max_seconds)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # the sentences past the budget are never synthesised


def _espeak(text: str, max_seconds: float) -> VoiceClip:
    """espeak-ng saying ``text``: its WAV read from a pipe as it comes, the process killed
    once ``max_seconds`` of audio are in. Never ``-m``: SSML stays text."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SpeechUnavailable("espeak-ng is not installed (`apt install espeak-ng`)")
    # The text goes on stdin, never on the command line: it is the model's, and may start
    # with a dash. ``-b 1``: it is UTF-8, whatever the locale.
    argv = [espeak, "-b", "1", "-v", ESPEAK_VOICE, "-s", str(ESPEAK_SPEED), "--stdout", "--stdin"]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as engine:
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            engine.kill()

        timeout = SPEAK_TIMEOUT + max_seconds / 10
        timer = threading.Timer(timeout, stop)
        timer.start()
        try:
            clip = _espeak_clip(engine, text, max_seconds)
        finally:
            timer.cancel()
            engine.kill()  # at the budget: the rest is never made
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(argv, timeout)
    if clip is None:
        raise subprocess.CalledProcessError(engine.returncode, argv)
    return clip


def _espeak_clip(engine: subprocess.Popen, text: str, max_seconds: float) -> VoiceClip | None:
    """The clip from a running espeak-ng; None when it failed before its audio."""
    stdin, stdout = engine.stdin, engine.stdout
    assert stdin is not None and stdout is not None
    try:  # --stdin: espeak-ng reads it all before it speaks, no deadlock
        with stdin:
            stdin.write(text.encode(errors="replace"))  # a lone surrogate: "?"
    except BrokenPipeError:
        pass  # it exited already: its status says why
    try:
        rate = _wav_rate(stdout)
    except ValueError:
        if engine.wait():
            return None
        raise
    return encode(iter(lambda: stdout.read(CHUNK), b""), rate, max_seconds)


def _wav_rate(stream: IO[bytes]) -> int:
    """A WAV header read up to its samples: their rate (mono s16 only). espeak-ng writes a
    length of 0xFFFFFFFF when piped: the data runs to the end."""
    head = stream.read(12)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise ValueError("the speech engine gave no WAV audio")
    rate = 0
    while len(header := stream.read(8)) == 8:
        kind, size = header[:4], int.from_bytes(header[4:], "little")
        if kind == b"data":
            if not rate:
                break
            return rate
        if size > 1 << 16:
            break
        body = stream.read(size + size % 2)  # chunks are padded to an even size
        if kind == b"fmt ":
            channels, bits = int.from_bytes(body[2:4], "little"), body[14:16]
            if channels != 1 or bits != (16).to_bytes(2, "little"):
                raise ValueError("the speech engine's audio is not mono 16-bit")
            rate = int.from_bytes(body[4:8], "little")
    raise ValueError("the speech engine's WAV audio holds no data")
