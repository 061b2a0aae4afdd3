"""Voice messages → text, on this machine.

``audio`` decodes an audio file (Ogg/Opus as Discord records voice messages, and other common
formats) to 16 kHz mono PCM with PyAV; ``engines`` turns that PCM into text with one of the
speech-to-text engines behind one small interface (faster-whisper for users, pocketsphinx,
whose English model ships inside its package, for the tests); ``status`` is what ``doctor``
says about them. Nothing here is imported by the hooks, and the engines and PyAV are imported
only when a voice message arrives: the default install has neither.
"""
