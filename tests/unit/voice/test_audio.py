"""bridge/voice/audio.py and engines.py on real audio: espeak-ng speech, encoded as Discord's
voice messages are (Ogg/Opus), decoded with PyAV and transcribed by pocketsphinx."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.config.model import VoiceSettings
from bridge.voice import audio, engines
from bridge_testkit.speech import encode, speak_wav, voice_message


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    data, seconds = voice_message("how are you today")
    path = tmp_path_factory.mktemp("voice") / "voice-message.ogg"
    path.write_bytes(data)
    return path, seconds


def test_ogg_opus_decodes_to_16_khz_mono_pcm_of_its_length(spoken) -> None:
    path, seconds = spoken
    pcm = audio.decode(str(path), max_seconds=30)
    assert len(pcm) % 2 == 0
    assert audio.seconds(pcm) == pytest.approx(seconds, abs=0.1)


def test_pocketsphinx_transcribes_the_spoken_sentence(spoken) -> None:
    path, _ = spoken
    engine = engines.load(VoiceSettings({"engine": "pocketsphinx"}))
    assert engine is engines.load(VoiceSettings({"engine": "pocketsphinx"}))  # loaded once
    words = engine.transcribe(audio.decode(str(path), max_seconds=30)).split()
    assert {"how", "today"} <= set(words)


def test_audio_past_the_limit_is_refused_without_decoding_it_all(spoken) -> None:
    path, seconds = spoken
    with pytest.raises(audio.TooLong) as caught:
        audio.decode(str(path), max_seconds=seconds / 2)
    assert caught.value.max_seconds == seconds / 2


def test_a_wav_file_is_audio_too(tmp_path) -> None:
    path = tmp_path / "speech.wav"
    path.write_bytes(speak_wav("hello"))
    assert audio.seconds(audio.decode(str(path), max_seconds=30)) > 0.3


@pytest.mark.parametrize(
    "content",
    [
        b"#EXTM3U\n#EXT-X-VERSION:3\nfile:///etc/passwd\n",  # a playlist opens other files
        b"ffconcat version 1.0\nfile /etc/passwd\n",
        b"hello, this is text",
        b"",
    ],
)
def test_files_that_are_not_plain_audio_containers_are_not_opened(tmp_path, content) -> None:
    path = tmp_path / "voice-message.ogg"
    path.write_bytes(content)
    with pytest.raises(audio.AudioError, match="not an audio format"):
        audio.decode(str(path), max_seconds=30)


def test_a_broken_ogg_file_is_an_audio_error(tmp_path, spoken) -> None:
    path = tmp_path / "broken.ogg"
    path.write_bytes(spoken[0].read_bytes()[:64] + b"\xff" * 500)
    with pytest.raises(audio.AudioError):
        audio.decode(str(path), max_seconds=30)


@pytest.mark.parametrize(
    ("head", "demuxer"),
    [
        (b"OggS\0\2" + b"\0" * 10, "ogg"),
        (b"RIFF\0\0\0\0WAVEfmt ", "wav"),
        (b"fLaC\0\0\0\x22" + b"\0" * 8, "flac"),
        (b"\0\0\0\x20ftypM4A " + b"\0" * 4, "mov"),
        (b"\x1a\x45\xdf\xa3" + b"\0" * 12, "matroska"),
        (b"ID3\4\0" + b"\0" * 11, "mp3"),
        (b"\xff\xfb\x90\x64" + b"\0" * 12, "mp3"),
        (b"\xff\xf1\x50\x80" + b"\0" * 12, "aac"),
        (b"#EXTM3U\n" + b"\0" * 8, None),
        (b"", None),
    ],
)
def test_sniff_names_the_demuxer_from_the_first_bytes(head, demuxer) -> None:
    assert audio.sniff(head) == demuxer


def test_a_missing_engine_says_how_to_install_it(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # import fails: not installed
    with pytest.raises(engines.EngineUnavailable) as caught:
        engines.FasterWhisper(VoiceSettings({}))
    assert "faster-whisper is not installed" in str(caught.value)
    assert caught.value.how == "pip install 'discord-bridge[voice]'"


def tiny_flac(rate: int, blocksize: int = 65535, frames: int = 3) -> bytes:
    """A valid FLAC file of CONSTANT-subframe frames (a few bytes each): ``frames *
    blocksize`` samples at ``rate`` Hz, i.e. hours of audio in a hundred bytes at 1 Hz."""

    def crc8(data: bytes) -> int:
        c = 0
        for b in data:
            c ^= b
            for _ in range(8):
                c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        return c

    def crc16(data: bytes) -> int:
        c = 0
        for b in data:
            c ^= b << 8
            for _ in range(8):
                c = ((c << 1) ^ 0x8005) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
        return c

    # STREAMINFO: block sizes, frame sizes (unknown), rate:20 channels-1:3 bits-1:5 total:36
    packed = (rate << 44) | (15 << 36) | (blocksize * frames)
    info = blocksize.to_bytes(2, "big") * 2 + b"\0" * 6 + packed.to_bytes(8, "big") + b"\0" * 16
    data = b"fLaC\x80" + len(info).to_bytes(3, "big") + info
    for number in range(frames):  # frame numbers below 128: one byte each
        # sync, 16-bit block size at the end, rate from STREAMINFO, mono, 16-bit samples
        header = b"\xff\xf8\x70\x08" + bytes([number]) + (blocksize - 1).to_bytes(2, "big")
        header += bytes([crc8(header)])
        body = header + b"\x00" + (100).to_bytes(2, "big")  # a CONSTANT subframe
        data += body + crc16(body).to_bytes(2, "big")
    return data


def test_the_crafted_flac_is_audio_at_a_normal_rate(tmp_path) -> None:
    path = tmp_path / "normal.flac"
    path.write_bytes(tiny_flac(16000, blocksize=4096, frames=4))
    assert audio.seconds(audio.decode(str(path), max_seconds=30)) == pytest.approx(1.024)


@pytest.mark.parametrize("rate", [1, 8])
def test_a_tiny_file_at_a_very_low_sample_rate_is_refused_before_it_is_resampled(
    tmp_path, rate
) -> None:
    """Each 65535-sample frame at 1 Hz is 18 hours: resampled to 16 kHz first, one frame of a
    100-byte file took 2 GB of memory (and came back empty at 1 Hz). It is refused before
    any resampling, and the decoding process never grows past a few hundred MB."""
    import subprocess
    import sys

    path = tmp_path / "voice-message.flac"
    path.write_bytes(tiny_flac(rate))
    assert path.stat().st_size < 200
    code = (
        "import sys\n"
        "from bridge.voice import audio\n"
        "try:\n"
        "    audio.decode(sys.argv[1], 30)\n"
        "    print('decoded')\n"
        "except audio.AudioError:\n"
        "    print('refused')\n"
        # VmHWM, not ru_maxrss: Linux carries the forking parent's (pytest's) RSS over exec
        # into ru_maxrss, so late in a full run it read ~470 MB for a 30 MB child.
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(int(hwm.split()[1]) // 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer, peak_mb = done.stdout.split()
    assert answer == "refused"
    assert int(peak_mb) < 300


def test_a_frame_longer_than_the_limit_is_too_long() -> None:
    """At an accepted rate, one FLAC frame of 65 s is refused as too long."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".flac") as handle:
        handle.write(tiny_flac(1000, frames=1))
        handle.flush()
        with pytest.raises(audio.TooLong):
            audio.decode(handle.name, max_seconds=30)


@pytest.mark.parametrize("rate", [2_000_000_000, 400])
def test_a_wav_file_at_an_absurd_sample_rate_is_not_audio_to_decode(tmp_path, rate) -> None:
    import struct

    data = b"\x01\x00" * 8000
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2 % (1 << 32), 2, 16)
    wav = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + fmt
    path = tmp_path / "odd.wav"
    path.write_bytes(wav + b"data" + struct.pack("<I", len(data)) + data)
    with pytest.raises(audio.AudioError, match="sample rate"):
        audio.decode(str(path), max_seconds=30)


# --- a format that changes part-way (issue 18.8) --------------------------------------------

FIRST, SECOND = "how are you today", "thank you very much"  # words pocketsphinx knows well


@pytest.fixture(scope="module")
def speech() -> tuple[bytes, bytes]:
    return speak_wav(FIRST), speak_wav(SECOND)


def transcript(path: Path) -> tuple[set[str], float]:
    pcm = audio.decode(str(path), max_seconds=30)
    engine = engines.load(VoiceSettings({"engine": "pocketsphinx"}))
    return set(engine.transcribe(pcm).split()), audio.seconds(pcm)


def heard_both(words: set[str]) -> bool:
    return {"today"} <= words and {"thank", "very"} <= words


@pytest.mark.parametrize("bare", [True, False], ids=["mp3 frames", "cat of two mp3 files"])
def test_two_mp3_files_at_different_rates_joined_are_both_transcribed(
    tmp_path, speech, bare: bool
) -> None:
    """22.05 kHz then 44.1 kHz in one file: the resampler is rebuilt where the rate changes
    (it raised PyAV's ValueError); joined with cat, the second file's ID3 tag mid-stream is
    skipped."""
    first = encode(speech[0], "mp3", "libmp3lame", 22050, bare=bare)
    second = encode(speech[1], "mp3", "libmp3lame", 44100, bare=bare)
    path = tmp_path / "joined.mp3"
    path.write_bytes(first + second)
    words, seconds = transcript(path)
    assert heard_both(words), words
    alone = []
    for part in (first, second):
        path.write_bytes(part)
        alone.append(audio.seconds(audio.decode(str(path), max_seconds=30)))
    assert seconds == pytest.approx(sum(alone), abs=0.1)


@pytest.mark.parametrize(
    "first, second",
    [((44100, "mono"), (22050, "mono")), ((44100, "stereo"), (44100, "mono"))],
    ids=["rate", "layout"],
)
def test_a_chained_ogg_whose_format_changes_is_transcribed_whole(
    tmp_path, speech, first, second
) -> None:
    path = tmp_path / "chained.ogg"
    path.write_bytes(
        encode(speech[0], "ogg", "flac", *first) + encode(speech[1], "ogg", "flac", *second)
    )
    words, _ = transcript(path)
    assert heard_both(words), words


@pytest.mark.parametrize(
    "codec, layout, message",
    [
        ("flac", "mono", "part of the audio cannot be decoded"),  # the decoder rejects part 2
        ("vorbis", "stereo", "its format changes part-way"),
    ],  # FFmpeg's demuxer cannot follow
)
def test_a_chained_ogg_the_decoder_cannot_follow_is_refused_clearly(
    tmp_path, speech, codec: str, layout: str, message: str
) -> None:
    """Never a transcript of the first part alone, never PyAV's own words."""
    path = tmp_path / "chained.ogg"
    path.write_bytes(
        encode(speech[0], "ogg", codec, 22050, layout)
        + encode(speech[1], "ogg", codec, 44100, layout)
    )
    with pytest.raises(audio.AudioError, match=message) as caught:
        audio.decode(str(path), max_seconds=30)
    assert str(path) not in str(caught.value)


def test_a_file_that_never_decodes_again_after_damage_is_refused(tmp_path, speech) -> None:
    """A damaged stretch is forgiven only when decoding resumes after it."""
    good = encode(speech[0], "mp3", "libmp3lame", 22050, bare=True)
    path = tmp_path / "damaged.mp3"
    path.write_bytes(good + bytes(range(256)) * 400)
    with pytest.raises(audio.AudioError, match="part of the audio cannot be decoded"):
        audio.decode(str(path), max_seconds=30)
