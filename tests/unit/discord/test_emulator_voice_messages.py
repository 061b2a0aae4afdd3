"""The emulator refuses voice messages as Discord does (JSON error codes 50159–50162)."""

from __future__ import annotations

import pytest

from discord_emulator.validation import ApiError, validate_message

VOICE = 1 << 13
META = {"id": 0, "filename": "voice-message.ogg", "duration_secs": 1.5, "waveform": "AAEC"}


def code(body: dict, files: int = 1, edit: bool = False) -> int:
    with pytest.raises(ApiError) as refused:
        validate_message(body, files, edit)
    return refused.value.code


def test_a_voice_message_with_one_file_and_its_metadata_is_accepted() -> None:
    validate_message({"flags": VOICE, "attachments": [META]}, 1)


def test_a_voice_message_with_text_more_files_or_no_metadata_is_refused() -> None:
    assert code({"flags": VOICE, "content": "hi", "attachments": [META]}) == 50159
    assert code({"flags": VOICE, "attachments": [META, {**META, "id": 1}]}, files=2) == 50160
    assert code({"flags": VOICE, "attachments": []}, files=0) == 50160
    assert code({"flags": VOICE, "attachments": [{"id": 0, "waveform": "AAEC"}]}) == 50161
    assert code({"flags": VOICE, "attachments": [META]}, edit=True) == 50162


def test_attachment_duration_and_waveform_are_held_to_the_spec() -> None:
    assert code({"attachments": [{**META, "waveform": "A" * 401}]}) == 50035
    assert code({"attachments": [{**META, "duration_secs": -1}]}) == 50035
    assert code({"attachments": [{**META, "duration_secs": "long"}]}) == 50035
