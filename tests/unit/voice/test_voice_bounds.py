"""A reply read aloud stays within its budget whatever the text: CJK and digits (few spaces,
spoken slowly) are cut by characters and the engine is stopped at the budget's audio; memory
does not grow with the reply; control characters (espeak-ng's embedded commands) are not obeyed.
"""

from __future__ import annotations

import base64
import io
import math
import shutil
import subprocess
import sys
import types
from array import array
from pathlib import Path

import pytest

from bridge.voice import opus, prose, tts

ROOT = Path(__file__).resolve().parents[3]
CJK = "汉字测试语音" * 170  # ~3 KB of UTF-8; espeak-ng says each as "Chinese letter…"
DIGITS = ("1234567890" * 410)[:4096]  # 4 KB, no space: read a digit at a time
SENTENCE = "hello there my friend how are you today"


def espeak() -> None:
    pytest.importorskip("av")
    if tts.engine_name() != "espeak-ng":
        pytest.skip("espeak-ng is not the engine here")


def decoded(data: bytes) -> array:
    """The Ogg/Opus file as a player hears it: its samples at 48 kHz."""
    import av

    samples = array("h")
    with av.open(io.BytesIO(data)) as file:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in file.decode(audio=0):
            for out in resampler.resample(frame):
                samples.frombytes(bytes(out.planes[0])[: out.samples * 2])
    return samples


@pytest.mark.parametrize("text", [CJK, DIGITS], ids=["cjk", "digits"])
def test_text_with_few_spaces_is_spoken_within_the_budget(text: str) -> None:
    """The bot's path (prose.spoken, then tts.speak): the voice message lasts at most the
    budget, by its metadata and by its audio (espeak-ng would say ~4 and ~16 minutes)."""
    espeak()
    clip = tts.speak(prose.spoken(text, 8), 8)
    assert 4 < clip.duration <= 8
    heard = len(decoded(clip.data)) / 48000
    assert heard <= 8.05, heard  # Opus pads its last frame (≤ 20 ms) and its pre-skip
    assert clip.attachment()["duration_secs"] <= 8


def test_cutting_by_characters_keeps_text_with_few_spaces_short() -> None:
    cut = prose.within(CJK, 30)
    assert len(cut) == 30 * prose.CHARS_PER_SECOND and cut.endswith(" …")
    assert prose.within(DIGITS, 10) == DIGITS[:198] + " …"
    words = prose.within("word " * 40 + "x" * 1100, 60)  # 41 words, but 1,300 characters
    assert words == " ".join(["word"] * 40) + " …"
    assert tts.speakable("汉" * 5000, 10) == "汉" * 200  # the engine's own cap


def peak_rss_mb(text: str, seconds: float) -> float:
    """Peak RSS of a fresh process that speaks ``text`` as the bot does."""
    probe = (
        "import resource, sys\n"
        "from bridge.voice import prose, tts\n"
        "text = sys.stdin.read()\n"
        f"tts.speak(prose.spoken(text, {seconds}), {seconds})\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    return float(done.stdout)


def test_speaking_a_long_reply_takes_no_more_memory_than_a_short_one() -> None:
    """4 KB of CJK at the default budget: the whole WAV was held, then its samples, then the
    frame (~570 MB); now a chunk at a time (the floor is PyAV and the interpreter)."""
    espeak()
    floor = peak_rss_mb("Hello.", 60)
    assert peak_rss_mb(CJK + CJK, 60) - floor < 40


@pytest.mark.parametrize("command", ["\x0120S", "\x01400S", "\x0199P", "\x0110A", "\x012G"])
def test_embedded_commands_are_not_obeyed(command: str) -> None:
    """espeak-ng obeys Ctrl+A + number + letter (speed, pitch, amplitude, gap) even without
    -m: the control character is dropped, the rest is heard as the text it is."""
    espeak()
    plain = tts.speak(command[1:] + SENTENCE + " [0m", 60)
    commanded = tts.speak(command + SENTENCE + "\x85\x1b[0m\x00", 60)
    assert commanded.duration == plain.duration
    assert decoded(commanded.data) == decoded(plain.data)  # the same audio, sample for sample


def test_ssml_is_read_as_text_never_obeyed() -> None:
    espeak()
    clip = tts.speak('hi <break time="9s"/> there', 60)  # with -m: a 9 s pause
    assert clip.duration < 6


class _Chunk:
    def __init__(self, data: bytes) -> None:
        self.audio_int16_bytes = data


class _PiperVoice:
    """piper-tts's voice as its API has it: a sentence's audio at a time (here a second of
    tone each, 600 of them: the long reply an unbounded Piper path would encode whole)."""

    def __init__(self, new_api: bool) -> None:
        self.config = types.SimpleNamespace(sample_rate=16000)
        self.texts: list[str] = []
        self.made = 0
        if new_api:
            self.synthesize_wav = lambda text, out: None  # piper-tts ≥ 1.3 has it

    def _seconds(self, text: str):
        self.texts.append(text)
        tone = array("h", (int(8000 * math.sin(i / 5)) for i in range(16000))).tobytes()
        for _ in range(600):
            self.made += 1
            yield tone

    def synthesize(self, text: str):  # 1.3
        return (_Chunk(data) for data in self._seconds(text))

    def synthesize_stream_raw(self, text: str):  # 1.2
        return self._seconds(text)


@pytest.mark.parametrize("new_api", [True, False], ids=["piper-1.3", "piper-1.2"])
def test_piper_gets_the_same_bounds(monkeypatch, new_api: bool) -> None:
    """Piper: the text without control characters and cut by characters; synthesis stopped
    at the budget (sentences past it are never made), the audio within it."""
    pytest.importorskip("av")
    voice = _PiperVoice(new_api)
    monkeypatch.setitem(sys.modules, "piper", types.ModuleType("piper"))
    monkeypatch.setattr(tts, "_piper_voice", voice)
    clip = tts.speak("\x0150S" + "汉" * 5000, 5)
    assert voice.texts == ["50S" + "汉" * 97]
    assert clip.duration == 5 and voice.made <= 6
    assert len(decoded(clip.data)) / 48000 <= 5.05


def tone(seconds: float, rate: int = 16000) -> bytes:
    count = int(seconds * rate)
    return array("h", (int(9000 * math.sin(i / 3)) for i in range(count))).tobytes()


def test_encoding_in_chunks_of_any_size_is_encoding_it_whole() -> None:
    """A pipe may hand over odd byte counts: the clip is the same as from one piece."""
    pytest.importorskip("av")
    pcm = tone(3.0)
    whole = opus.encode([pcm], 16000)
    pieces = opus.encode((pcm[i : i + 4097] for i in range(0, len(pcm), 4097)), 16000)
    assert (
        (pieces.duration, pieces.waveform)
        == (whole.duration, whole.waveform)
        == (
            3.0,
            whole.waveform,
        )
    )
    assert decoded(pieces.data) == decoded(whole.data)
    cut = opus.encode((pcm[i : i + 999] for i in range(0, len(pcm), 999)), 16000, 1.25)
    assert cut.duration == 1.25 and len(base64.b64decode(cut.waveform)) == 13


def test_a_failing_engine_is_an_error_not_an_empty_clip(tmp_path, monkeypatch) -> None:
    broken = tmp_path / "espeak-ng"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(subprocess.CalledProcessError) as failed:
        tts.speak("hello", 1)  # 0.5 s + 0.1 s
    assert failed.value.returncode == 3


def test_an_engine_that_hangs_is_stopped_at_the_timeout(tmp_path, monkeypatch) -> None:
    hung = tmp_path / "espeak-ng"
    hung.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 60\n")
    hung.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tts, "SPEAK_TIMEOUT", 0.5)
    with pytest.raises(subprocess.TimeoutExpired):
        tts.speak("hello", 1)  # 0.5 s + 0.1 s
