"""Speech-to-text engines behind one small interface: ``transcribe(pcm) -> str``.

``pcm`` is 16 kHz mono signed 16-bit little-endian audio (``audio.decode``). Engines are
imported lazily (the default install has none) and loaded once per process: a model takes
seconds to load, and faster-whisper fetches it from Hugging Face on first use (then cached).
Each engine is used by one thread at a time (the caller's single voice worker).
"""

from __future__ import annotations

import threading
from typing import Protocol

from bridge.config.model import VoiceSettings

SAMPLE_RATE = 16000
INSTALL = "pip install 'discord-bridge[voice]'"  # faster-whisper and PyAV
INSTALL_SCRIPT = "./install.sh --voice"


class EngineUnavailable(Exception):
    """The engine or the audio decoder cannot be imported. ``str()`` says what is missing,
    ``how`` how to install it."""

    def __init__(self, what: str, how: str) -> None:
        super().__init__(what)
        self.how = how


class Engine(Protocol):
    name: str

    def transcribe(self, pcm: bytes) -> str:
        """The words spoken in ``pcm`` (16 kHz mono s16le), "" when none were recognised."""
        ...


class FasterWhisper:
    """faster-whisper (CTranslate2): the users' engine, many languages, on CPU or GPU."""

    name = "faster-whisper"

    def __init__(self, settings: VoiceSettings) -> None:
        try:
            from faster_whisper import WhisperModel
        except ImportError as err:  # not installed, or a broken install (ctranslate2…)
            raise EngineUnavailable(f"faster-whisper is not installed ({err})", INSTALL) from err
        self.language = settings.language
        # A size such as "base" is fetched from Hugging Face on first use, then cached; a
        # directory is a converted model used as it is.
        self._model = WhisperModel(settings.model, device="auto", compute_type="auto")

    def transcribe(self, pcm: bytes) -> str:
        import numpy

        audio = numpy.frombuffer(pcm, dtype=numpy.int16).astype(numpy.float32) / 32768.0
        segments, _info = self._model.transcribe(audio, language=self.language)
        return " ".join(segment.text.strip() for segment in segments).strip()


class PocketSphinx:
    """CMU PocketSphinx: English only and far less accurate, but its model ships inside the
    package (no download): the tests' engine, and a small one for users who want that."""

    name = "pocketsphinx"

    def __init__(self, settings: VoiceSettings) -> None:
        try:
            from pocketsphinx import Decoder
        except ImportError as err:
            raise EngineUnavailable(
                f"pocketsphinx is not installed ({err})", "pip install pocketsphinx av"
            ) from err
        self._decoder = Decoder(loglevel="FATAL")  # the bundled US English model

    def transcribe(self, pcm: bytes) -> str:
        decoder = self._decoder
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        hypothesis = decoder.hyp()
        return hypothesis.hypstr.strip() if hypothesis is not None else ""


ENGINES: dict[str, type[FasterWhisper] | type[PocketSphinx]] = {
    FasterWhisper.name: FasterWhisper,
    PocketSphinx.name: PocketSphinx,
}

_loaded: dict[tuple, Engine] = {}
_lock = threading.Lock()


def load(settings: VoiceSettings) -> Engine:
    """The engine ``settings`` names, loaded once per process (blocking: call it off the
    event loop). Raises :class:`EngineUnavailable` when it is not installed."""
    key = (settings.engine, settings.model, settings.language)
    with _lock:
        engine = _loaded.get(key)
        if engine is None:
            engine = _loaded[key] = ENGINES[settings.engine](settings)
        return engine


def is_loaded(settings: VoiceSettings) -> bool:
    return (settings.engine, settings.model, settings.language) in _loaded
