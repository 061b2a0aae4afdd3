"""An audio file → 16 kHz mono 16-bit PCM, with PyAV (FFmpeg's libraries, in its wheel).

The file comes from Discord, so it is untrusted: its format is recognised here from its first
bytes and only the plain audio containers below are opened (never FFmpeg's playlist or concat
demuxers, which open other files or URLs; nested opens are limited to the file protocol
anyway). Decoding stops as soon as the audio is longer than the limit, so a long or
endlessly looping file costs at most that much work and memory: each decoded frame's own
length counts before it is resampled (a 100-byte FLAC file at 1 Hz holds 18 hours a frame,
2 GB once resampled to 16 kHz), and sample rates no recording uses are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bridge.voice.engines import INSTALL, SAMPLE_RATE, EngineUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator

    import av

BYTES_PER_SECOND = SAMPLE_RATE * 2  # mono, 16-bit
RATES = (1000, 384000)  # Hz: the sample rates accepted (telephone speech is 8000)
# Damaged packets in a row that are skipped while waiting for decoding to resume (an ID3 tag
# mid-file is one); past this, or at the end of the file, the audio is refused.
MAX_DAMAGED = 32


class AudioError(Exception):
    """The file cannot be read as audio; ``str()`` says why, for the user."""


class TooLong(AudioError):
    def __init__(self, max_seconds: float) -> None:
        super().__init__(f"longer than {max_seconds:g} s")
        self.max_seconds = max_seconds


def require_decoder() -> None:
    """Raise :class:`EngineUnavailable` when PyAV cannot be imported."""
    try:
        import av  # noqa: F401
    except ImportError as err:
        what = f"the audio decoder PyAV is not installed ({err})"
        raise EngineUnavailable(what, INSTALL) from err


def sniff(head: bytes) -> str | None:
    """FFmpeg's demuxer for a file starting with ``head`` (its first 16 bytes), or None when
    it is none of the audio containers accepted: Ogg (Discord's voice messages: Opus), WAV,
    FLAC, MP3, ADTS AAC, MP4/M4A, Matroska/WebM."""
    if head.startswith(b"OggS"):
        return "ogg"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"fLaC"):
        return "flac"
    if head[4:8] == b"ftyp":
        return "mov"  # FFmpeg's demuxer for mp4, m4a and mov
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "matroska"  # also WebM
    if head.startswith(b"ID3"):
        return "mp3"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return "aac" if head[1] & 0x06 == 0 else "mp3"  # ADTS has layer bits 00
    return None


def decode(path: str, max_seconds: float) -> bytes:
    """The audio of ``path`` as 16 kHz mono s16le PCM. Raises :class:`TooLong` past
    ``max_seconds``, :class:`AudioError` for a file that is not audio, and
    :class:`EngineUnavailable` without PyAV. Blocking: call it off the event loop."""
    require_decoder()
    import av

    with open(path, "rb") as handle:
        demuxer = sniff(handle.read(16))
    if demuxer is None:
        raise AudioError("not an audio format I can read (Ogg, WAV, FLAC, MP3, AAC, M4A, WebM)")
    limit = int(max_seconds * BYTES_PER_SECOND)
    pcm = bytearray()
    try:
        with av.open(path, format=demuxer, options={"protocol_whitelist": "file"}) as container:
            if not container.streams.audio:
                raise AudioError("the file holds no audio")
            for chunk in _resampled(_decoded(container, container.streams.audio[0], max_seconds)):
                pcm += chunk
                if len(pcm) > limit:
                    raise TooLong(max_seconds)
    except av.PatchWelcomeError as err:  # FFmpeg's "not yet implemented": e.g. chained Ogg
        raise AudioError("its format changes part-way in a way I cannot decode") from err
    except av.FFmpegError as err:
        raise AudioError(f"the audio cannot be decoded ({err})") from err
    if len(pcm) > limit:
        raise TooLong(max_seconds)
    return bytes(pcm)


def _decoded(
    container: av.container.InputContainer, stream: av.AudioStream, max_seconds: float
) -> Iterator[av.AudioFrame]:
    """The stream's frames, checked before anything is resampled (their rate, the length).

    A damaged stretch is skipped when decoding resumes after it: two MP3 files joined with
    ``cat`` hold the second one's ID3 tag mid-stream, which the decoder refuses as one packet.
    Audio that never resumes (a chained Ogg FLAC stream at a higher rate: the decoder rejects
    every packet of the second part) is refused, never transcribed in part."""
    import av

    damaged = 0  # packets refused since the last frame decoded
    heard = 0.0  # seconds decoded, counted before resampling
    for packet in container.demux(stream):  # ends with an empty packet: flushes the decoder
        try:
            frames = packet.decode()
        except av.InvalidDataError:
            damaged += 1
            if damaged > MAX_DAMAGED:
                raise
            continue
        for frame in frames:
            damaged = 0
            rate = frame.sample_rate
            if not RATES[0] <= rate <= RATES[1]:
                raise AudioError(f"a sample rate of {rate} Hz is not a recording's")
            heard += frame.samples / rate
            if heard > max_seconds:
                raise TooLong(max_seconds)
            yield frame
    if damaged:
        raise AudioError("part of the audio cannot be decoded (its format changes part-way?)")


def _resampled(frames: Iterator[av.AudioFrame]) -> Iterator[bytes]:
    """Frames of any rate, layout and sample format as 16 kHz mono s16 bytes. A resampler
    takes one input format, and a file can change it part-way (two MP3 files at 22.05 and
    44.1 kHz joined, a chained Ogg stream): the resampler is rebuilt, after it gave what it
    still held, whenever the frames' format changes."""
    import av

    resampler, shape = None, None
    for frame in frames:
        if resampler is None or (frame.format.name, frame.layout.name, frame.sample_rate) != shape:
            if resampler is not None:
                yield from map(_samples, resampler.resample(None))
            resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
            shape = (frame.format.name, frame.layout.name, frame.sample_rate)
        yield from map(_samples, resampler.resample(frame))
    if resampler is not None:
        yield from map(_samples, resampler.resample(None))


def _samples(frame: av.AudioFrame) -> bytes:
    """A packed mono s16 frame's samples (its plane may be padded past them)."""
    return bytes(frame.planes[0])[: frame.samples * 2]


def seconds(pcm: bytes) -> float:
    return len(pcm) / BYTES_PER_SECOND
