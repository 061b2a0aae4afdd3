"""`discord-bridge try`'s pieces that need no process: arguments, names, addresses, errors."""

from __future__ import annotations

import errno

import pytest

from bridge import tryout, tryout_page, tryout_setup


@pytest.mark.parametrize(
    ("listen", "port", "expected"),
    [
        (None, None, ("127.0.0.1", 8765)),
        ("0.0.0.0", None, ("0.0.0.0", 8765)),
        ("0.0.0.0:9000", None, ("0.0.0.0", 9000)),
        ("0.0.0.0:9000", 9100, ("0.0.0.0", 9100)),  # --port wins
        ("[::]:9000", None, ("::", 9000)),
        ("::", None, ("::", 8765)),
        ("192.168.1.5", 0, ("192.168.1.5", 0)),
    ],
)
def test_listen_addresses(listen, port, expected) -> None:
    assert tryout_setup.parse_listen(listen, port) == expected


def test_bad_listen_and_port_are_clear_errors() -> None:
    with pytest.raises(tryout_setup.TryError, match="give an address"):
        tryout_setup.parse_listen("a b:c", None)
    with pytest.raises(tryout_setup.TryError, match="not a port number"):
        tryout_setup.parse_listen(None, 70000)


def test_project_dir_must_exist_and_be_a_directory(tmp_path) -> None:
    assert tryout_setup.project_dir(str(tmp_path)) == str(tmp_path)
    with pytest.raises(tryout_setup.TryError, match=r"project directory .*/nope does not exist"):
        tryout_setup.project_dir(str(tmp_path / "nope"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(tryout_setup.TryError, match="is not a directory"):
        tryout_setup.project_dir(str(tmp_path / "file"))


def test_names_and_seeds_are_stable_per_directory_and_differ_between_them() -> None:
    assert tryout_setup.slug("/home/me/My Project!") == "my-project"
    assert tryout_setup.slug("/") == "project"
    assert tryout_setup.slug("/srv/control-panel") == "control-panel-project"  # not the panel's
    seed_for = tryout_setup.seed_for
    assert seed_for("/a/b") == seed_for("/a/b") != seed_for("/a/c")
    assert tryout_setup.work_dir("/a/b") != tryout_setup.work_dir("/c/b")


def test_codex_gets_channel_ids_of_its_own_so_it_never_meets_claudes_window() -> None:
    """``try`` finds the window it left by its channel's id: ``--agent codex`` on the same
    directory must not find the Claude Code a plain ``try`` left running (or the other way)."""
    seed_for = tryout_setup.seed_for
    assert seed_for("/a/b", "codex") == seed_for("/a/b", "codex") != seed_for("/a/b")
    assert seed_for("/a/b", "claude") == seed_for("/a/b")  # a plain try's ids are as they were


def test_page_url_and_loopback() -> None:
    assert tryout_page.page_url("127.0.0.1", 8765, "T") == "http://127.0.0.1:8765/#token=T"
    assert tryout_page.page_url("::1", 80, "T") == "http://[::1]:80/#token=T"
    assert not tryout_page.page_url("0.0.0.0", 1, "T").startswith("http://0.0.0.0")
    assert tryout_setup.is_loopback("127.0.0.1") and not tryout_setup.is_loopback("0.0.0.0")


def test_bind_errors_say_what_to_do() -> None:
    busy = tryout_page.bind_error("127.0.0.1", 8765, OSError(errno.EADDRINUSE, "in use"))
    assert busy.startswith("port 8765 on 127.0.0.1 is already in use") and "--port" in busy
    foreign = tryout_page.bind_error("10.9.9.9", 1, OSError(errno.EADDRNOTAVAIL, "cannot assign"))
    assert "not an address of this machine" in foreign


def test_warns_when_the_hooks_belong_to_another_bridge_home(tmp_path, monkeypatch) -> None:
    from bridge.claude import settings as claude_settings

    settings = tmp_path / ".claude" / "settings.json"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(claude_settings, "default_settings_path", lambda: str(settings))
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "one"))
    assert any("not installed" in w for w in tryout_page.warnings())
    claude_settings.install(str(settings))
    assert not any("hooks" in w for w in tryout_page.warnings())
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "two"))
    assert any(f"bridge home {tmp_path / 'one'}" in w for w in tryout_page.warnings())


def test_codex_warns_of_its_own_hooks_file_never_of_claudes(tmp_path, monkeypatch) -> None:
    from bridge.codex import hooks_file

    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))  # no Claude Code hooks there either
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "one"))
    (warning,) = [w for w in tryout_page.warnings("codex") if "hooks" in w]
    assert f"not in Codex's {codex_home / 'hooks.json'}" in warning
    hooks_file.install(str(codex_home / "hooks.json"))
    assert not any("hooks" in w for w in tryout_page.warnings("codex"))
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "two"))
    assert any(f"bridge home {tmp_path / 'one'}" in w for w in tryout_page.warnings("codex"))


def test_a_codex_project_in_the_config_and_its_home_in_the_banner(tmp_path) -> None:
    from types import SimpleNamespace

    from bridge import config

    emu = SimpleNamespace(
        bot_token="t",
        api_base="http://127.0.0.1:1/api/v10",
        gateway_url="ws://127.0.0.1:2",
        ids={"guild_id": "1" * 18, tryout_setup.OWNER: "2" * 18, "drivers_role_id": "5" * 18},
    )
    project = tmp_path / "webshop"
    project.mkdir()
    ids = {"webshop": "3" * 18, tryout_setup.PANEL_CHANNEL: "4" * 18}
    path = str(tmp_path / "config.json")
    tryout.write_config(path, str(project), emu, ids, agent="codex", agent_command="/x/codex")  # type: ignore[arg-type]
    (entry,) = config.load(path).servers[0].projects
    assert (entry.agent, entry.codex_command) == ("codex", "/x/codex")
    shown = tryout_page.banner(
        "http://x/#token=y", "127.0.0.1", str(project), "log", None, "/h/.codex"
    )
    assert "  codex     runs in tmux: tmux attach -t discord-bridge-try" in shown
    assert "  home      your CODEX_HOME, /h/.codex: your Codex login and config" in shown
    assert "Ctrl-C (Codex keeps running in tmux" in shown


class _Emu:
    """The emulator's control client, as far as announce_when_ready uses it."""

    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.calls: list[dict] = []
        self.client = self

    def wait(self, **query: object) -> dict:
        self.calls.append(query)
        if not self.ready:
            raise TimeoutError("no gateway_ready")
        return {"kind": "gateway_ready"}


def test_the_page_is_announced_once_the_bot_is_connected(capsys) -> None:
    emu = _Emu(ready=True)
    tryout.announce_when_ready(emu, 7, "42", "open http://page\n", None)
    assert emu.calls == [
        {"since": 7, "kind": "gateway_ready", "timeout": tryout.READY_WAIT, "user_id": "42"}
    ]
    assert capsys.readouterr().out == "open http://page\n"


def test_a_bot_slow_to_connect_is_said_with_the_address(capsys) -> None:
    tryout.announce_when_ready(_Emu(ready=False), 0, "42", "open x\n", None)
    assert "still connecting" in capsys.readouterr().out


def test_the_hand_over_page_is_private_and_forwards_to_the_page(tmp_path) -> None:
    """The browser is opened on this file (its address carries no secret); the file, which
    does, is the user's alone. Chromium following it: tests/e2e/test_try.py."""
    import stat

    path = tmp_path / "open.html"
    url = 'http://127.0.0.1:8765/#token=abc"<x>'
    opened = tryout_page.write_handover(str(path), url)
    assert opened == f"file://{path}" and "abc" not in opened
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert 'content="0;url=http://127.0.0.1:8765/#token=abc&quot;&lt;x&gt;"' in text
    assert "<x>" not in text


@pytest.mark.parametrize(("given", "dollars"), [(None, None), ("0.5", 0.5), ("$2", 2.0)])
def test_a_budget_is_asked_for_in_dollars_and_off_by_default(given, dollars) -> None:
    assert tryout_setup.parse_budget(given) == dollars


@pytest.mark.parametrize("given", ["0", "-1", "nan", "inf", "five", ""])
def test_a_budget_that_is_no_amount_is_a_clear_error(given) -> None:
    with pytest.raises(tryout_setup.TryError, match="give dollars a session may spend"):
        tryout_setup.parse_budget(given)


def test_the_budget_lands_in_the_generated_config_for_every_project(tmp_path) -> None:
    """``--budget``: each session of the try project (and of projects added with ``/project
    add``) may spend that much, and **Continue** adds as much again; without it, no budget."""
    from types import SimpleNamespace

    from bridge import config

    emu = SimpleNamespace(
        bot_token="t",
        api_base="http://127.0.0.1:1/api/v10",
        gateway_url="ws://127.0.0.1:2",
        ids={"guild_id": "1" * 18, tryout_setup.OWNER: "2" * 18, "drivers_role_id": "5" * 18},
    )
    project = tmp_path / "webshop"
    project.mkdir()
    ids = {"webshop": "3" * 18, tryout_setup.PANEL_CHANNEL: "4" * 18}
    path = str(tmp_path / "config.json")
    tryout.write_config(path, str(project), emu, ids, budget=0.5)  # type: ignore[arg-type]
    budget = config.load(path).servers[0].projects[0].budget
    assert (budget.session_usd, budget.day_usd, budget.continue_usd) == (0.5, None, 0.5)
    tryout.write_config(path, str(project), emu, ids)  # type: ignore[arg-type]
    assert not config.load(path).servers[0].projects[0].budget.any
    banner = tryout_page.banner("http://x/#token=y", "127.0.0.1", str(project), "log", 0.5)
    assert "  budget    $0.50 per session" in banner


def test_enter_stops_the_bot_behind_the_page_and_enter_again_starts_it() -> None:
    """``try``'s restart (Enter, or SIGUSR1): the first stops the running bot as SIGTERM does,
    as a pause (``try`` starts it again rather than end); the second lets it start."""
    import threading

    from bridge.tryout_pause import BotPause

    stops: list[str] = []
    pause = BotPause(stop=lambda: stops.append("SIGTERM"))
    pause.toggle()
    assert stops == ["SIGTERM"] and pause.paused
    resumed = threading.Event()
    waiter = threading.Thread(target=lambda: (pause.wait_to_resume(), resumed.set()))
    waiter.start()
    assert not resumed.wait(0.3)  # stopped until asked again
    pause.toggle()
    waiter.join(5)
    assert resumed.is_set() and not pause.paused and stops == ["SIGTERM"]
    pause.toggle()  # running again: the next one stops it again
    assert stops == ["SIGTERM", "SIGTERM"]
