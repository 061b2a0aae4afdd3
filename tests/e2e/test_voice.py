"""Voice messages end to end: espeak-ng speech encoded as Discord records it (Ogg/Opus), posted
through the emulator as a voice message (flags IS_VOICE_MESSAGE, duration and waveform), then
transcribed by the bot with pocketsphinx, echoed, and typed into the real Claude Code."""

from __future__ import annotations

import base64
import time
from pathlib import Path

from bridge_testkit import BridgeRig
from bridge_testkit.speech import encode, speak_wav, voice_message
from fake_anthropic import last_user_text, text

MIC = "🎙️"
# The echo of what was heard, not "🎙️ Loading the … speech model" (posted first when the model
# takes over 3 s to load, as on a loaded machine).
ECHO = f"^{MIC} (?!Loading the )"
IS_VOICE_MESSAGE = 1 << 13


def use_voice(rig: BridgeRig, **settings: object) -> None:
    raw = rig.config()
    raw["voice"] = settings
    rig.write_config(raw)


def post_voice(rig: BridgeRig, data: bytes, seconds: float, project: str = "project-a") -> dict:
    rig.last_post_mark = rig.discord.mark()  # later waits look from here on
    return rig.discord.post_voice_message(rig.ids[project], data, seconds)


def uploads(rig: BridgeRig) -> list[Path]:
    root = rig.state_dir / "uploads"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_voice_message_is_transcribed_echoed_and_typed_as_the_prompt(rig) -> None:
    use_voice(rig, engine="pocketsphinx", maxSeconds=30)
    rig.api.script(text("Fine, thanks for asking."))
    rig.start_bot()
    data, seconds = voice_message("how are you today")
    sent = post_voice(rig, data, seconds)

    record = rig.discord.wait(
        since=rig.last_post_mark,
        kind="message_create",
        channel_id=rig.ids["project-a"],
        author_id=rig.ids["bot_id"],
        content_regex=ECHO,
        timeout=60,
    )
    echo = record["message"]
    assert record["allowed_mentions"]["parse"] == []  # what was heard pings nobody
    assert not record["allowed_mentions"].get("replied_user")
    heard = echo["content"].removeprefix(MIC).strip()
    assert {"how", "today"} <= set(heard.split()), heard  # what pocketsphinx made of it
    assert echo["message_reference"]["message_id"] == sent["id"]
    (request,) = rig.api.wait_requests(1, timeout=60)
    assert last_user_text(request) == heard  # exactly what the channel was shown
    reply = rig.wait_bot_message(content_contains="Fine, thanks")
    assert int(echo["id"]) < int(reply["id"])  # the echo came first
    rig.wait_reaction(sent)
    assert uploads(rig) == []  # the recording is not kept once transcribed


def test_audio_past_max_seconds_is_refused_and_nothing_is_typed(rig) -> None:
    use_voice(rig, engine="pocketsphinx", maxSeconds=2)
    rig.start_bot()
    data, seconds = voice_message("how are you today", repeat=4)
    assert seconds > 3

    # A voice message says how long it is: refused before it is downloaded.
    voice = post_voice(rig, data, seconds)
    refusal = rig.wait_bot_message(content_contains="not transcribed")
    assert f"it is {seconds:.0f} s long" in refusal["content"]
    assert "the limit is 2 s (`voice.maxSeconds`" in refusal["content"]
    assert "Nothing was typed" in refusal["content"]

    # The same audio as a plain file (no duration from Discord): measured while decoding.
    memo = rig.post("", attachments=[("memo.ogg", data)])
    refusal = rig.wait_bot_message(content_contains="not transcribed")
    assert "longer than that, and the limit is 2 s" in refusal["content"]
    assert refusal["message_reference"]["message_id"] == memo["id"]

    assert rig.api.requests == []
    assert rig.pane() is None  # Claude was not even started
    for message in (voice, memo):
        assert "✅" not in rig.discord.reactions(message["channel_id"], message["id"])
    assert uploads(rig) == []


def test_audio_files_longer_together_than_max_seconds_are_refused(rig) -> None:
    """The limit is the message's: ten files each under it are not ten times the work."""
    use_voice(rig, engine="pocketsphinx", maxSeconds=2)
    rig.start_bot()
    data, seconds = voice_message("how are you today")
    assert 1 < seconds < 2  # each file is within the limit, the two together are not

    memos = rig.post("", attachments=[("one.ogg", data), ("two.ogg", data)])
    refusal = rig.wait_bot_message(content_contains="not transcribed")
    assert "the limit is 2 s (`voice.maxSeconds`" in refusal["content"]
    assert refusal["message_reference"]["message_id"] == memos["id"]
    assert rig.api.requests == []
    assert rig.pane() is None
    assert uploads(rig) == []


def test_without_the_voice_extra_a_voice_message_says_how_to_enable_it(rig, tmp_path) -> None:
    # The default engine is faster-whisper. Whether or not this machine has it, the bot sees
    # an install whose import fails, as it does without the extra (or with a broken one).
    shadow = tmp_path / "no-voice-extra" / "faster_whisper"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'ctranslate2'\")\n")
    rig.start_bot(env={"PYTHONPATH": str(shadow.parent)})
    data, seconds = voice_message("how are you today")
    # Someone else's voice message is ignored like their text: no reply, no how-to.
    rig.discord.post_voice_message(rig.ids["project-a"], data, seconds, user="bob")
    sent = post_voice(rig, data, seconds)

    reply = rig.wait_bot_message(content_contains="not transcribed")
    assert "faster-whisper is not installed" in reply["content"]
    assert "`pip install 'discord-bridge[voice]'` (or `./install.sh --voice`)" in reply["content"]
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert rig.api.requests == [] and rig.pane() is None
    assert "✅" not in rig.discord.reactions(sent["channel_id"], sent["id"])
    assert [m["content"] for m in rig.bot_messages()] == [reply["content"]]  # none for bob


def test_two_mp3_recordings_joined_at_different_rates_are_typed_whole(rig) -> None:
    """Issue 18.8: `cat` of a 22.05 kHz and a 44.1 kHz MP3 (each with its ID3 tag) posted as
    an audio file: both parts are transcribed, echoed and typed; PyAV's resampler error used
    to reach the user instead."""
    use_voice(rig, engine="pocketsphinx", maxSeconds=30)
    rig.api.script(text("Both parts arrived."))
    rig.start_bot()
    joined = encode(speak_wav("how are you today"), "mp3", "libmp3lame", 22050) + encode(
        speak_wav("thank you very much"), "mp3", "libmp3lame", 44100
    )
    sent = rig.post("", attachments=[("memo.mp3", joined)])

    echo = rig.wait_bot_message(content_regex=ECHO, timeout=60)
    heard = echo["content"].removeprefix(MIC).strip()
    assert {"today", "thank", "very"} <= set(heard.split()), heard
    (request,) = rig.api.wait_requests(1, timeout=60)
    assert last_user_text(request) == heard
    rig.wait_bot_message(content_contains="Both parts arrived.")
    rig.wait_reaction(sent)
    assert not [m for m in rig.bot_messages() if "not transcribed" in m["content"]]


def wait_voice_message(rig: BridgeRig, timeout: float = 60.0) -> dict:
    """The bot's first voice message in the channel (as the channel holds it, with its
    attachment's duration and waveform)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        voiced = [m for m in rig.bot_messages() if m["flags"] & IS_VOICE_MESSAGE]
        if voiced:
            return voiced[0]
        time.sleep(0.1)
    raise AssertionError(f"no voice message from the bot:\n{rig.bot_output()[-3000:]}")


def hear(data: bytes, tmp_path: Path) -> set[str]:
    """The words pocketsphinx (the test's recogniser) hears in an Ogg/Opus file."""
    from bridge.config.model import VoiceSettings
    from bridge.voice import audio, engines

    path = tmp_path / "heard.ogg"
    path.write_bytes(data)
    engine = engines.load(VoiceSettings({"engine": "pocketsphinx"}))
    return set(engine.transcribe(audio.decode(str(path), 60)).split())


def test_a_voice_prompt_gets_its_reply_in_text_and_then_as_a_voice_message(rig, emu, tmp_path):
    """Issue 22 §3: the text reply first, then its prose spoken as a Discord voice message
    (flags IS_VOICE_MESSAGE, Ogg/Opus with duration and waveform); the code block is named,
    not read."""
    use_voice(rig, engine="pocketsphinx", maxSeconds=30)
    said = "Fine, thanks for asking. How are you today?"
    rig.api.script(text(f"{said}\n\n```python\nprint('zebra xylophone')\n```"))
    rig.start_bot()
    data, seconds = voice_message("how are you today")
    post_voice(rig, data, seconds)

    reply = rig.wait_bot_message(content_contains="Fine, thanks", timeout=60)
    voice = wait_voice_message(rig)
    assert int(reply["id"]) < int(voice["id"])  # the text came first
    assert voice["content"] == ""
    (clip,) = voice["attachments"]
    assert clip["filename"].endswith(".ogg") and clip["content_type"] == "audio/ogg"
    audio = rig.discord.file_bytes(clip)
    assert audio.startswith(b"OggS") and b"OpusHead" in audio[:100]
    assert 2 < clip["duration_secs"] < 15, clip["duration_secs"]
    waveform = base64.b64decode(clip["waveform"])
    assert 0 < len(waveform) <= 256 and max(waveform) == 255 and min(waveform) < 64
    words = {"fine", "thanks", "for", "asking", "how", "are", "you", "today"}
    heard = hear(audio, tmp_path)
    assert len(words & heard) > len(words) / 2, heard  # the reply's words, spoken
    assert not {"zebra", "xylophone"} & heard  # the code block is named, not read

    # The try page plays it: an <audio> element, its length shown, the Ogg served as audio.
    page_shows_a_voice_message(emu, rig.ids["project-a"], audio)


def page_shows_a_voice_message(emu, channel_id: str, audio: bytes) -> None:
    from tests.e2e.test_try import chromium

    port = emu.serve_web("127.0.0.1", 0, "voice-test-token", "alice", channel_id)
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"http://127.0.0.1:{port}/#token=voice-test-token")
            players = page.locator("#messages .attachment.audio audio")
            players.nth(1).wait_for()  # the user's voice prompt, then the bot's voice reply
            assert page.locator("#messages .attachment.audio", has_text="🎙️ 0:0").count() == 2
            player = players.nth(1)
            served = page.request.get(
                page.url.split("#")[0].rstrip("/") + player.get_attribute("src")
            )
            assert served.headers["content-type"] == "audio/ogg"
            assert served.body() == audio
            played = "document.querySelectorAll('#messages .attachment.audio audio')[1]"
            page.wait_for_function(f"() => {played}.duration > 1")  # Chromium decoded it
    finally:
        emu.stop_web()


def test_a_reply_that_cannot_be_spoken_keeps_its_text_and_says_so_once(rig, tmp_path) -> None:
    """A speech engine that fails (here an espeak-ng that exits 1): the text reply is
    posted as always, then one short note; no voice message."""
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "espeak-ng").write_text("#!/bin/sh\necho 'no audio device' >&2\nexit 1\n")
    (broken / "espeak-ng").chmod(0o755)
    use_voice(rig, engine="pocketsphinx", maxSeconds=30, replies="always")
    rig.api.script(text("Fine, thanks for asking."))
    rig.start_bot(env={"PATH": f"{broken}:{rig.env.get('PATH', '/usr/bin:/bin')}"})
    rig.post("how are you")  # a typed prompt: spoken only because replies is "always"

    reply = rig.wait_bot_message(content_contains="Fine, thanks", timeout=60)
    note = rig.wait_bot_message(content_contains="could not be spoken", timeout=60)
    assert int(reply["id"]) < int(note["id"])
    assert not [m for m in rig.bot_messages() if m["flags"] & IS_VOICE_MESSAGE]


def test_a_reply_that_speaks_long_is_stopped_at_the_budget(rig, tmp_path) -> None:
    """A reply of CJK and digits (few spaces: a word count lets it through, espeak-ng reads it
    a character at a time, minutes of audio) with espeak-ng's embedded commands in it: the
    voice message lasts at most ``voice.maxReplySeconds``, by its metadata and its audio."""
    import av

    use_voice(rig, engine="pocketsphinx", maxSeconds=30, replies="always", maxReplySeconds=6)
    said = "\x0180S" + "汉字测试语音" * 300 + "\n\n" + "1234567890" * 300
    rig.api.script(text(said))
    rig.start_bot()
    rig.post("read me something long")

    rig.wait_bot_message(content_contains="汉字测试", timeout=60)
    voice = wait_voice_message(rig)
    (clip,) = voice["attachments"]
    assert 3 < clip["duration_secs"] <= 6, clip["duration_secs"]
    path = tmp_path / "reply.ogg"
    path.write_bytes(rig.discord.file_bytes(clip))
    with av.open(str(path)) as heard:
        samples = sum(frame.samples for frame in heard.decode(audio=0))
    assert samples / 48000 <= 6.05  # Opus rounds up to its last 20 ms frame
