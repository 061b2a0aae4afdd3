"""What ``doctor`` says about the voice engine (bridge/voice/status.py)."""

from __future__ import annotations

import sys

from bridge.config.model import VoiceSettings
from bridge.voice import status


def test_pocketsphinx_installed_is_ok() -> None:
    level, what, _ = status.check(VoiceSettings({"engine": "pocketsphinx"}))
    assert level == status.OK and "pocketsphinx" in what


def test_faster_whisper_missing_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # find_spec: not importable
    level, what, hint = status.check(VoiceSettings({}))
    assert level == status.INFO  # the bridge works without it: not a warning
    assert "faster-whisper is not installed" in what
    assert "pip install 'discord-bridge[voice]'" in hint and "./install.sh --voice" in hint


def test_a_model_directory_counts_as_cached(tmp_path) -> None:
    assert status.whisper_model_cached(str(tmp_path)) == (True, str(tmp_path))
