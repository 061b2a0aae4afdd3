"""Voice on Discord (the audio itself is ``bridge/voice/``'s): a voice message transcribed and
typed as the prompt (``messages``), a reply also spoken back as a voice message (``replies``),
both on the process's one voice thread.
"""
