"""The voice worker runs niced: a transcription's seconds of CPU yield to the event loop."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from bridge.bot.voice import messages


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_the_transcription_thread_runs_niced_and_the_bot_does_not() -> None:
    def own_nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = own_nice()
    worker = messages._WORKER.submit(own_nice).result(timeout=10)
    assert worker >= messages.VOICE_NICE  # (a bot already niced more keeps its own)
    assert own_nice() == base  # the calling thread (the event loop's) keeps its priority
