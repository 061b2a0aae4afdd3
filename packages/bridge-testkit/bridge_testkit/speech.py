"""Spoken test audio: espeak-ng says a sentence, PyAV encodes it as Discord's clients record
voice messages (Ogg/Opus, 48 kHz mono).

espeak-ng is a Debian package (scripts/test.sh installs it), PyAV (``av``) a test extra.
pocketsphinx, the tests' speech engine, recognises espeak-ng's ``en-us+f2`` voice at 160 words
a minute well on short everyday sentences (e.g. "how are you today"), not on arbitrary ones.
"""

from __future__ import annotations

import io
import shutil
import subprocess

VOICE = "en-us+f2"
SPEED = 160  # words per minute


def speak_wav(text: str, voice: str = VOICE, speed: int = SPEED) -> bytes:
    """``text`` spoken by espeak-ng, as a WAV file's bytes (22 050 Hz mono)."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise RuntimeError("espeak-ng is required (apt-get install espeak-ng)")
    return subprocess.run(
        [espeak, "-v", voice, "-s", str(speed), "--stdout", "--", text],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout


def to_ogg_opus(audio: bytes) -> tuple[bytes, float]:
    """Any audio file's bytes → (Ogg/Opus bytes, duration in seconds), mono 48 kHz like a
    Discord voice message."""
    import av

    out = io.BytesIO()
    samples = 0
    with av.open(io.BytesIO(audio)) as source, av.open(out, "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=48000, layout="mono")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in [*source.decode(audio=0), None]:
            for chunk in resampler.resample(frame):
                samples += chunk.samples
                for packet in stream.encode(chunk):
                    target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    return out.getvalue(), samples / 48000


def encode(
    audio: bytes, container: str, codec: str, rate: int, layout: str = "mono", bare: bool = False
) -> bytes:
    """Any audio file's bytes re-encoded: ``container`` (``mp3``, ``ogg``…) holding ``codec``
    (``libmp3lame``, ``flac``, ``vorbis``…) at ``rate`` Hz. ``bare``: an MP3 without its ID3
    tag and Xing header (frames only, as a stream is cut)."""
    import av

    out = io.BytesIO()
    options = {"id3v2_version": "0", "write_xing": "0"} if bare else {}
    with av.open(io.BytesIO(audio)) as source, av.open(out, "w", container, options) as target:
        stream = target.add_stream(
            codec, rate=rate, layout=layout, options={"strict": "experimental"}
        )  # FFmpeg's own vorbis
        wanted = stream.codec_context.codec.audio_formats[0].name
        resampler = av.AudioResampler(format=wanted, layout=layout, rate=rate)
        for frame in [*source.decode(audio=0), None]:
            for chunk in resampler.resample(frame):
                for packet in stream.encode(chunk):
                    target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    return out.getvalue()


def voice_message(text: str, repeat: int = 1) -> tuple[bytes, float]:
    """``text`` spoken (``repeat`` times, for long audio) as Ogg/Opus, with its duration."""
    return to_ogg_opus(speak_wav(" ".join([text] * repeat)))
