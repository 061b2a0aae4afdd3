"""What ``doctor`` says about voice messages: is the engine installed, is its model there."""

from __future__ import annotations

import importlib.util
import os

from bridge.config.model import VoiceSettings
from bridge.voice.engines import INSTALL, INSTALL_SCRIPT

OK, WARN, INFO = "ok", "warn", "info"


def check(settings: VoiceSettings) -> tuple[str, str, str]:
    """``(level, what, hint)`` for the configured engine: not installed is information (the
    bridge works without it; a voice message gets a reply saying how to enable it), a
    faster-whisper model not downloaded yet a warning (the first voice message fetches it)."""
    engine = settings.engine
    missing = [name for name in _modules(engine) if not _importable(name)]
    if missing:
        how = INSTALL if engine == "faster-whisper" else "pip install pocketsphinx av"
        what = f"voice messages: {engine} is not installed (missing {', '.join(missing)})"
        hint = f"to transcribe voice messages: {how} (or {INSTALL_SCRIPT})"
        return INFO, what, hint
    if engine == "pocketsphinx":
        return OK, "voice messages: pocketsphinx (English model bundled)", ""
    cached, where = whisper_model_cached(settings.model)  # else where: why not
    if cached:
        return OK, f"voice messages: faster-whisper, model {settings.model} ({where})", ""
    what = f"voice messages: faster-whisper model {settings.model} is not downloaded yet"
    return WARN, what, "the first voice message fetches it from Hugging Face (then cached)"


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module set to None, a broken parent package
        return False


def _modules(engine: str) -> list[str]:
    return ["faster_whisper", "av"] if engine == "faster-whisper" else ["pocketsphinx", "av"]


def whisper_model_cached(model: str) -> tuple[bool, str]:
    """Whether faster-whisper can load ``model`` without a download, and where it is."""
    if os.path.isdir(os.path.expanduser(model)):
        return True, os.path.expanduser(model)
    try:
        from faster_whisper.utils import download_model

        path = download_model(model, local_files_only=True)
    except Exception as err:  # not in the cache (or an unknown size): fetched on first use
        return False, _short(err)
    return True, f"cached in {path}"


def _short(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:200]
