"""Beyond the bridge's own sessions: this machine's other Claude Code sessions adopted into a
thread and released (``adopt``, ``/sessions``), a project's past conversations resumed in a
thread (``history``, ``/history``), a session's web app screenshotted (``preview``).
"""
