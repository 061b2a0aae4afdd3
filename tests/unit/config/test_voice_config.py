"""The ``voice`` section: defaults, and each wrong value named with its path and the fix."""

from __future__ import annotations

import copy

from bridge import config
from tests.unit.config.test_config import GOOD


def test_voice_settings_default_to_faster_whisper_base_and_five_minutes() -> None:
    voice = config.BridgeConfig(copy.deepcopy(GOOD), env={}).voice
    assert (voice.engine, voice.model, voice.max_seconds, voice.language) == (
        "faster-whisper",
        "base",
        300.0,
        None,
    )


def test_voice_settings_are_read() -> None:
    raw = copy.deepcopy(GOOD)
    raw["voice"] = {"engine": "pocketsphinx", "model": "small", "maxSeconds": 30, "language": "en"}
    voice = config.BridgeConfig(raw, env={}).voice
    assert (voice.engine, voice.model, voice.max_seconds, voice.language) == (
        "pocketsphinx",
        "small",
        30.0,
        "en",
    )


def test_wrong_voice_settings_are_named() -> None:
    raw = copy.deepcopy(GOOD)
    raw["voice"] = {"engine": "whisper.cpp", "model": "", "maxSeconds": 0, "language": 5}
    assert config.validate(raw) == [
        "voice.engine: expected one of faster-whisper, pocketsphinx (got 'whisper.cpp')",
        "voice.model: expected a non-empty string",
        "voice.language: expected a non-empty string",
        "voice.maxSeconds: expected seconds between 1 and 3600",
    ]
    raw["voice"] = {"maxSeconds": True}
    assert config.validate(raw) == ["voice.maxSeconds: expected seconds between 1 and 3600"]
    raw["voice"] = "on"
    assert config.validate(raw) == [
        "voice: expected an object (engine, model, maxSeconds, language, replies, maxReplySeconds)"
    ]


def test_voice_replies_default_to_after_voice_prompts_within_a_minute() -> None:
    voice = config.BridgeConfig(copy.deepcopy(GOOD), env={}).voice
    assert (voice.replies, voice.max_reply_seconds) == ("voice", 60.0)
    raw = copy.deepcopy(GOOD)
    raw["voice"] = {"replies": "always", "maxReplySeconds": 20}
    voice = config.BridgeConfig(raw, env={}).voice
    assert (voice.replies, voice.max_reply_seconds) == ("always", 20.0)


def test_wrong_voice_reply_settings_are_named() -> None:
    raw = copy.deepcopy(GOOD)
    raw["voice"] = {"replies": "sometimes", "maxReplySeconds": 0}
    assert config.validate(raw) == [
        "voice.replies: expected one of voice, always, never (got 'sometimes')",
        "voice.maxReplySeconds: expected seconds between 1 and 3600",
    ]
