"""bridge/voice/audio.py and engines.py on real audio: espeak-ng speech, encoded as Discord's
voice messages are (Ogg/Opus), decoded with PyAV and transcribed by pocketsphinx."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.config.model import VoiceSettings
from bridge.voice import audio, engines
from bridge_testkit.speech import speak_wav, voice_message


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
