"""PCM as it comes → a Discord voice message: Ogg/Opus, its duration and waveform, cut at a length.

Discord's clients record voice messages as Ogg/Opus, 48 kHz mono; PyAV (the voice extra)
encodes it. The audio is encoded chunk by chunk as the speech engine makes it, and stops at
the reply's time budget: what is held is the file so far, one chunk and a number for each
tenth of a second (the waveform's material), never the whole audio.
"""

from __future__ import annotations

import base64
import io
import math
from array import array
from collections.abc import Iterable
from fractions import Fraction

OPUS_RATE = 48000
MAX_WAVEFORM = 256  # bytes: Discord's limit for a voice message's waveform
WAVEFORM_STEP = 0.1  # seconds of audio per waveform byte (Discord's clients: ~10 a second)


class VoiceClip:
    """An encoded voice message: the Ogg/Opus bytes, its length and its waveform."""

    __slots__ = ("data", "duration", "waveform")

    def __init__(self, data: bytes, duration: float, waveform: str) -> None:
        self.data = data
        self.duration = duration  # seconds
        self.waveform = waveform  # base64 of ≤ 256 amplitude bytes

    def attachment(self, index: int = 0, filename: str = "voice-message.ogg") -> dict:
        """The attachment metadata a voice message is posted with."""
        return {
            "id": index,
            "filename": filename,
            "duration_secs": round(self.duration, 2),
            "waveform": self.waveform,
        }


def encode(chunks: Iterable[bytes], rate: int, max_seconds: float = math.inf) -> VoiceClip:
    """Mono s16le PCM at ``rate`` Hz, in ``chunks`` of any size, → Ogg/Opus at 48 kHz with
    its duration and waveform. Reading stops at ``max_seconds`` of audio: the caller stops
    its engine then (the chunks not asked for are never made)."""
    if rate <= 0:
        raise ValueError("the speech engine gave no sample rate")
    limit = math.inf if math.isinf(max_seconds) else int(max_seconds * rate)
    opus, loudness = _Opus(rate), _Loudness(rate)
    odd = b""
    for chunk in chunks:
        data = odd + chunk
        odd = data[len(data) // 2 * 2 :]  # a pipe may split a sample
        samples = array("h", data[: len(data) - len(odd)])
        if opus.samples + len(samples) >= limit:
            del samples[int(limit - opus.samples) :]
        opus.write(samples)
        loudness.add(samples)
        if opus.samples >= limit:
            break
    return VoiceClip(opus.close(), opus.samples / rate, waveform(loudness.blocks()))


class _Opus:
    """An Ogg/Opus file written as the audio comes."""

    def __init__(self, rate: int) -> None:
        import av

        self.rate = rate
        self.samples = 0
        self._out = io.BytesIO()
        self._file = av.open(self._out, "w", format="ogg")
        self._stream = self._file.add_stream("libopus", rate=OPUS_RATE, layout="mono")
        self._resampler = av.AudioResampler(format="s16", layout="mono", rate=OPUS_RATE)

    def write(self, samples: array) -> None:
        import av

        if not samples:
            return
        frame = av.AudioFrame(format="s16", layout="mono", samples=len(samples))
        frame.planes[0].update(samples.tobytes())
        frame.sample_rate = self.rate
        frame.time_base = Fraction(1, self.rate)
        frame.pts = self.samples  # frames follow on: the resampler keeps them in time
        self.samples += len(samples)
        self._encode(frame)

    def _encode(self, frame: object) -> None:
        for chunk in self._resampler.resample(frame):  # type: ignore[arg-type]
            for packet in self._stream.encode(chunk):
                self._file.mux(packet)

    def close(self) -> bytes:
        self._encode(None)
        for packet in self._stream.encode(None):
            self._file.mux(packet)
        self._file.close()
        return self._out.getvalue()


class _Loudness:
    """The energy of each tenth of a second (the last one perhaps shorter) as the audio comes."""

    def __init__(self, rate: int) -> None:
        self._block = max(1, round(rate * WAVEFORM_STEP))
        self._energy = array("d")
        self._pending = array("h")

    def add(self, samples: array) -> None:
        self._pending.extend(samples)
        while len(self._pending) >= self._block:
            self._energy.append(sum(s * s for s in self._pending[: self._block]))
            del self._pending[: self._block]

    def blocks(self) -> list[tuple[float, int]]:
        """(energy, samples) of each block."""
        blocks = [(energy, self._block) for energy in self._energy]
        if self._pending:
            blocks.append((float(sum(s * s for s in self._pending)), len(self._pending)))
        return blocks


def waveform(blocks: list[tuple[float, int]]) -> str:
    """Base64 of one loudness byte (0–255, the loudest stretch 255) per block of ~0.1 s, at
    most 256 of them (longer audio: blocks merged), as Discord's clients draw a voice message."""
    count = max(1, min(MAX_WAVEFORM, len(blocks)))
    if not blocks:
        return base64.b64encode(bytes(count)).decode()
    levels = []
    for i in range(count):
        part = blocks[i * len(blocks) // count : (i + 1) * len(blocks) // count]
        energy, samples = sum(e for e, _ in part), sum(n for _, n in part)
        levels.append(math.sqrt(energy / samples) if samples else 0.0)
    loudest = max(levels) or 1.0
    return base64.b64encode(bytes(min(255, round(255 * v / loudest)) for v in levels)).decode()
