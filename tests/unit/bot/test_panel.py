"""The control panel's lifecycle (no Discord: refresh is faked)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import discord
import pytest

from bridge.bot.control import panel as panel_module
from bridge.bot.control.panel import ControlPanel
from bridge.state import runtime

CHANNEL = "100000000000000009"


def test_a_failed_first_refresh_does_not_leave_the_panel_dead(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(panel_module, "DEBOUNCE_SECONDS", 0.0)
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    sessions = SimpleNamespace(runtime=rt, unknown_worktrees=lambda: [])
    panel = ControlPanel(SimpleNamespace(), sessions, CHANNEL)
    calls: list[bool] = []

    async def refresh(force: bool = False) -> None:
        calls.append(force)
        if len(calls) == 1:  # Discord had a bad moment while the bot started
            response = SimpleNamespace(status=503, reason="Service Unavailable")
            raise discord.DiscordServerError(response, "try again")

    panel.refresh = refresh

    async def scenario() -> None:
        with pytest.raises(discord.DiscordServerError):
            await panel.start()
        panel.request_refresh()  # a session starts: the panel must follow
        for _ in range(100):
            if len(calls) > 1:
                break
            await asyncio.sleep(0.01)
        if panel._task is not None:
            panel._task.cancel()

    asyncio.run(scenario())
    assert len(calls) == 2
