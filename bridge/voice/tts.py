"""Text → a Discord voice message: a local speech engine, Ogg/Opus, duration and waveform.

Engines, best first: Piper (``piper-tts``, natural voices; its voice model is fetched from
Hugging Face on first use, then cached) when installed, else espeak-ng (a Debian package,
robotic but small and everywhere). Both run on this machine: nothing said leaves it. The
audio is encoded as Discord's clients record voice messages (Ogg/Opus, 48 kHz mono) with
PyAV, which the voice extra already brings. Blocking: call it off the event loop.
"""

from __future__ import annotations

import base64
import io
import logging
import math
import shutil
import subprocess
from array import array

log = logging.getLogger(__name__)

OPUS_RATE = 48000
MAX_WAVEFORM = 256  # bytes: Discord's limit for a voice message's waveform
WAVEFORM_STEP = 0.1  # seconds of audio per waveform byte (Discord's clients: ~10 a second)
ESPEAK_VOICE = "en-us+f2"  # the voice pocketsphinx, the tests' recogniser, hears best
ESPEAK_SPEED = 160  # words per minute (prose.WORDS_PER_MINUTE)
PIPER_VOICE = "en_US-lessac-medium"
PIPER_REPO = "rhasspy/piper-voices"
SPEAK_TIMEOUT = 120  # seconds for an engine to say a reply of a few minutes at most


class SpeechUnavailable(Exception):
    """No speech engine on this machine; ``str()`` says how to install one."""


class VoiceClip:
    """An encoded voice message: the Ogg/Opus bytes, its length and its waveform."""

    __slots__ = ("data", "duration", "waveform")

    def __init__(self, data: bytes, duration: float, waveform: str) -> None:
        self.data = data
        self.duration = duration  # seconds
        self.waveform = waveform  # base64 of ≤ 256 amplitude bytes

    def attachment(self, index: int = 0, filename: str = "voice-message.ogg") -> dict:
        """The attachment metadata a voice message is posted with."""
        return {"id": index, "filename": filename, "duration_secs": round(self.duration, 2),
                "waveform": self.waveform}  # fmt: skip


def engine_name() -> str:
    """The engine :func:`speak` would use: ``piper`` or ``espeak-ng``."""
    if _has_piper():
        return "piper"
    if shutil.which("espeak-ng"):
        return "espeak-ng"
    raise SpeechUnavailable(
        "no speech engine is installed (`pip install piper-tts` or `apt install espeak-ng`)"
    )


def speak(text: str) -> VoiceClip:
    """``text`` spoken and encoded as a voice message. Piper's voice that cannot be fetched
    (Hugging Face unreachable) or loaded falls back to espeak-ng when it is there."""
    if engine_name() == "piper":
        try:
            return encode(*_piper(text))
        except Exception as err:
            if not shutil.which("espeak-ng"):
                raise
            log.warning("Piper could not speak (%s); espeak-ng speaks instead", err)
    return encode(*_decode_wav(_espeak(text)))


def _has_piper() -> bool:
    try:
        import piper  # noqa: F401
    except ImportError:
        return False
    return True


_piper_voice = None


def _piper(text: str) -> tuple[bytes, int]:
    """Piper's voice (loaded once; its model fetched on first use) saying ``text``."""
    global _piper_voice
    if _piper_voice is None:
        from huggingface_hub import hf_hub_download
        from piper import PiperVoice

        lang, name, quality = PIPER_VOICE.split("-")
        folder = f"{lang.split('_')[0]}/{lang}/{name}/{quality}/"
        model = hf_hub_download(PIPER_REPO, folder + PIPER_VOICE + ".onnx")
        hf_hub_download(PIPER_REPO, folder + PIPER_VOICE + ".onnx.json")
        _piper_voice = PiperVoice.load(model)
    wav = io.BytesIO()
    import wave

    with wave.open(wav, "wb") as out:
        if hasattr(_piper_voice, "synthesize_wav"):  # piper-tts 1.3 and later
            _piper_voice.synthesize_wav(text, out)
        else:  # piper-tts 1.2: sets the WAV header itself
            _piper_voice.synthesize(text, out)
    return _decode_wav(wav.getvalue())


def _espeak(text: str) -> bytes:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SpeechUnavailable("espeak-ng is not installed (`apt install espeak-ng`)")
    # The text goes on stdin, never on the command line: it is the model's, and may start
    # with a dash.
    return subprocess.run(
        [espeak, "-v", ESPEAK_VOICE, "-s", str(ESPEAK_SPEED), "--stdout", "--stdin"],
        input=text.encode(), capture_output=True, check=True, timeout=SPEAK_TIMEOUT,
    ).stdout  # fmt: skip


def _decode_wav(data: bytes) -> tuple[bytes, int]:
    """A WAV file's mono s16 samples and rate (espeak-ng writes a length of 0xFFFFFFFF
    when piped: the header's size is not trusted, the data runs to the end)."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("the speech engine gave no WAV audio")
    rate = int.from_bytes(data[24:28], "little")
    position = 12
    while position + 8 <= len(data):
        chunk = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        if chunk == b"data":
            body = data[position + 8 :]
            return body[: len(body) // 2 * 2], rate
        position += 8 + size
    raise ValueError("the speech engine's WAV audio holds no data")


def encode(pcm: bytes, rate: int) -> VoiceClip:
    """Mono s16le ``pcm`` at ``rate`` Hz → Ogg/Opus at 48 kHz, with duration and waveform."""
    import av

    out = io.BytesIO()
    samples = array("h", pcm)
    with av.open(out, "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=OPUS_RATE, layout="mono")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=OPUS_RATE)
        frame = av.AudioFrame(format="s16", layout="mono", samples=len(samples))
        frame.planes[0].update(samples.tobytes())
        frame.sample_rate = rate
        for source in (frame, None):
            for chunk in resampler.resample(source):
                for packet in stream.encode(chunk):
                    target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    duration = len(samples) / rate if rate else 0.0
    return VoiceClip(out.getvalue(), duration, waveform(samples, duration))


def waveform(samples: array, duration: float) -> str:
    """Base64 of one loudness byte (0–255, the loudest stretch 255) per ~0.1 s of audio, at
    most 256 of them, as Discord's clients draw a voice message."""
    count = max(1, min(MAX_WAVEFORM, math.ceil(duration / WAVEFORM_STEP)))
    if not samples:
        return base64.b64encode(bytes(count)).decode()
    step = len(samples) / count
    levels = []
    for i in range(count):
        part = samples[int(i * step) : max(int((i + 1) * step), int(i * step) + 1)]
        levels.append(math.sqrt(sum(s * s for s in part) / len(part)) if part else 0.0)
    loudest = max(levels) or 1.0
    return base64.b64encode(bytes(min(255, round(255 * v / loudest)) for v in levels)).decode()
