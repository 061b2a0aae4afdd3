"""What a hook takes from its environment (issue 13.6): a project's settings can set any of it."""

from __future__ import annotations

import json
import os

import pytest

from bridge.handlers import context as hook_context
from bridge.state import locations, runtime, session_state
from bridge_testkit import hook_input

CHANNEL, LISTED, RECORDED, OTHER = (
    "100000000000000003",
    "100000000000000004",
    "100000000000000005",
    "100000000000000009",
)


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "bridge-home"
    home.mkdir(mode=0o700)
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {
                    "botToken": "tok",
                    "ownerUserId": "100000000000000002",
                    "apiBaseUrl": "http://127.0.0.1:1/api/v10",
                },
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": CHANNEL,
                        "projectPath": str(tmp_path / "alpha"),
                        "threads": [{"name": "t", "channelId": LISTED}],
                    }
                ],
            }
        ],
    }
    (home / "config.json").write_text(json.dumps(raw))
    return home


def trusted(tmp_path, home, **markers: str) -> dict[str, str]:
    env = {
        runtime.ENV_HOME: str(home),
        runtime.ENV_RUNTIME_DIR: str(tmp_path / "rt"),
        runtime.ENV_STATE_DIR: str(tmp_path / "rt"),
    }
    return {**env, **markers}


def test_endpoints_come_from_the_config_file_not_the_environment(tmp_path, home) -> None:
    env = trusted(tmp_path, home, DISCORD_BRIDGE_CHANNEL_ID=CHANNEL)
    env["DISCORD_BRIDGE_API_BASE"] = "http://127.0.0.1:9/steal"
    env["DISCORD_BRIDGE_GATEWAY_URL"] = "ws://127.0.0.1:9/steal"
    context = hook_context.resolve(hook_input("Stop"), env)
    assert context is not None
    assert context.server.api_base == "http://127.0.0.1:1/api/v10"
    assert context.server.gateway_url == "wss://gateway.discord.gg/"


@pytest.mark.parametrize("thread", ["../../x", "1/../../x", "12345", OTHER, CHANNEL, " " + LISTED])
def test_a_thread_marker_that_is_not_a_thread_of_the_project_is_ignored(
    tmp_path, home, thread: str
) -> None:
    env = trusted(
        tmp_path, home, DISCORD_BRIDGE_CHANNEL_ID=CHANNEL, DISCORD_BRIDGE_THREAD_ID=thread
    )
    context = hook_context.resolve(hook_input("Stop"), env)
    assert context is not None and context.thread_id is None
    assert context.channel_id == CHANNEL
    log = (tmp_path / "rt" / "logs" / "hooks.log").read_text()
    assert "ignored DISCORD_BRIDGE_THREAD_ID" in log


def test_a_thread_listed_in_the_config_or_recorded_by_the_bot_is_used(tmp_path, home) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "rt")).ensure()
    session_state.save(rt, RECORDED, {"project": "alpha", "thread_id": RECORDED})
    for thread in (LISTED, RECORDED):
        env = trusted(
            tmp_path, home, DISCORD_BRIDGE_CHANNEL_ID=CHANNEL, DISCORD_BRIDGE_THREAD_ID=thread
        )
        context = hook_context.resolve(hook_input("Stop"), env)
        assert context is not None and context.channel_id == thread


@pytest.mark.parametrize("marker", ["../x", OTHER, "1" * 40])
def test_a_channel_marker_the_config_does_not_map_falls_back_to_the_cwd(
    tmp_path, home, marker: str
) -> None:
    env = trusted(tmp_path, home, DISCORD_BRIDGE_CHANNEL_ID=marker, DISCORD_BRIDGE_THREAD_ID=LISTED)
    assert hook_context.resolve(hook_input("Stop"), env) is None
    context = hook_context.resolve(hook_input("Stop", cwd=tmp_path / "alpha" / "src"), env)
    assert context is not None and context.channel_id == CHANNEL  # the thread marker is not used


def test_a_hook_takes_its_locations_from_its_command_line_not_its_env(tmp_path, home) -> None:
    hostile = {
        "HOME": str(tmp_path / "evil"),
        runtime.ENV_HOME: str(tmp_path / "evil"),
        runtime.ENV_CONFIG: str(tmp_path / "evil" / "config.json"),
        runtime.ENV_RUNTIME_DIR: str(tmp_path / "evil-rt"),
        hook_context.ENV_CHANNEL: CHANNEL,
    }
    argv = ["stop.py", "--home", str(home), "--runtime-dir", str(tmp_path / "rt")]
    env = hook_context.hook_env(argv, hostile)
    assert runtime.config_path(env) == str(home / "config.json")
    assert runtime.runtime_dir_path(env) == str(tmp_path / "rt")
    assert env[hook_context.ENV_CHANNEL] == CHANNEL
    # Without flags: the defaults, with ~ from the password database, not from $HOME.
    env = hook_context.hook_env(["stop.py"], hostile)
    assert runtime.config_path(env) == os.path.join(
        runtime.user_home(), ".discord-bridge", "config.json"
    )
    assert runtime.runtime_dir_path(env) != str(tmp_path / "evil-rt")


def test_run_config_is_trusted_only_once_the_bot_registered_it(tmp_path, home) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    argv = ["stop.py", "--home", str(home)]
    environ = {runtime.ENV_CONFIG: str(elsewhere)}
    assert runtime.config_path(hook_context.hook_env(argv, environ)) == str(home / "config.json")
    locations.register_config(str(elsewhere), {runtime.ENV_HOME: str(home)})
    assert runtime.config_path(hook_context.hook_env(argv, environ)) == str(elsewhere)
    registry = home / locations.RUN_CONFIGS
    assert registry.stat().st_mode & 0o777 == 0o600
    locations.register_config(str(home / "config.json"), {runtime.ENV_HOME: str(home)})  # default
    assert registry.read_text() == f"{elsewhere}\n"


def test_hooks_install_writes_the_locations_on_each_command(monkeypatch, tmp_path) -> None:
    from bridge.claude import settings as claude_settings

    monkeypatch.setenv(runtime.ENV_HOME, str(tmp_path / "h"))
    monkeypatch.setenv(runtime.ENV_RUNTIME_DIR, str(tmp_path / "r"))
    monkeypatch.setenv(runtime.ENV_STATE_DIR, str(tmp_path / "s"))
    command = claude_settings.hook_command("stop.py")
    flags = f"--home {tmp_path}/h --runtime-dir {tmp_path}/r --state-dir {tmp_path}/s"
    assert f"stop.py {flags} # discord-bridge" in command
    for name in (runtime.ENV_HOME, runtime.ENV_RUNTIME_DIR, runtime.ENV_STATE_DIR):
        monkeypatch.delenv(name)
    home = runtime.bridge_home()  # always written: the hooks must find the bot's config
    assert claude_settings.hook_command("stop.py").endswith(
        f"stop.py --home {home} # discord-bridge"
    )


def test_hooks_without_dir_flags_use_the_dirs_the_bot_recorded_not_their_environment(
    tmp_path,
) -> None:
    home = tmp_path / "home"
    rt = runtime.Runtime(str(tmp_path / "bot-run"), str(tmp_path / "bot-state")).ensure()
    locations.record_locations(rt, {runtime.ENV_HOME: str(home)})
    hostile = {"XDG_RUNTIME_DIR": ".x", "XDG_STATE_HOME": ".st"}  # a repository's env block
    env = locations.hook_locations(["--home", str(home), "-"], hostile)
    assert runtime.Runtime.from_env(env).root == str(tmp_path / "bot-run")
    assert runtime.Runtime.from_env(env).state_root == str(tmp_path / "bot-state")


def test_hooks_of_a_config_with_its_own_dirs_use_them_and_others_keep_the_homes(
    tmp_path,
) -> None:
    """`discord-bridge try`: its sessions' hooks (DISCORD_BRIDGE_CONFIG registered) use its
    dirs; every other hook, and an unregistered config, keep the bot's."""
    home = tmp_path / "home"
    env = {runtime.ENV_HOME: str(home)}
    bot = runtime.Runtime(str(tmp_path / "bot-run"), str(tmp_path / "bot-state")).ensure()
    locations.record_locations(bot, env)
    trial = runtime.Runtime(str(tmp_path / "try-run"), str(tmp_path / "try-state")).ensure()
    config = tmp_path / "try" / "config.json"
    locations.register_config(str(config), env)
    locations.record_config_locations(str(config), trial, env)
    argv = ["--home", str(home), "--runtime-dir", str(tmp_path / "flag-run"), "-"]

    mine = locations.hook_locations(argv, {runtime.ENV_CONFIG: str(config)})
    assert runtime.Runtime.from_env(mine).root == str(tmp_path / "try-run")
    assert runtime.Runtime.from_env(mine).state_root == str(tmp_path / "try-state")
    assert runtime.config_path(mine) == str(config)

    other = locations.hook_locations(["--home", str(home), "-"], {})
    assert runtime.Runtime.from_env(other).root == str(tmp_path / "bot-run")
    forged = locations.hook_locations(argv, {runtime.ENV_CONFIG: str(tmp_path / "other.json")})
    assert runtime.Runtime.from_env(forged).root == str(tmp_path / "flag-run")
    assert runtime.config_path(forged) == str(home / "config.json")


def hostile_dir(path, form: str) -> None:
    """What another local user leaves at ``path`` after a reboot emptied /tmp."""
    if form == "theirs":
        path.mkdir(mode=0o700)
        os.chown(path, 65534, 65534)  # nobody's: root can create it for them
    elif form == "open":
        path.mkdir()
        os.chmod(path, 0o777)
    else:  # a link to a directory of theirs
        theirs = path.parent / f"{path.name}-target"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        os.symlink(theirs, path)


@pytest.mark.parametrize("source", ["recorded", "flag", "config"])
@pytest.mark.parametrize("form", ["theirs", "open", "link"])
def test_a_runtime_dir_that_is_not_private_and_ours_is_refused(
    tmp_path, monkeypatch, form: str, source: str
) -> None:
    """Issue 18.6: the dir recorded in locations.json (or on the hook's command line, or
    recorded for a `try` config) is no longer ours after a reboot: the hook uses the private
    fallback the bot itself would use, never the other user's dir."""
    if os.geteuid() != 0 and form != "open":
        pytest.skip("needs root to create a directory owned by someone else")
    monkeypatch.setattr(runtime, "user_home", lambda: str(tmp_path / "user"))
    home = tmp_path / "home"
    shared = tmp_path / "shared"
    rt = runtime.Runtime(str(shared), str(tmp_path / "state"))
    env = {runtime.ENV_HOME: str(home)}
    argv, environ = ["--home", str(home), "-"], {}
    if source == "recorded":
        locations.record_locations(rt, env)
    elif source == "flag":
        home.mkdir(mode=0o700)
        argv = ["--home", str(home), "--runtime-dir", str(shared), "-"]
    else:
        config = tmp_path / "try" / "config.json"
        locations.register_config(str(config), env)
        locations.record_config_locations(str(config), rt, env)
        environ = {runtime.ENV_CONFIG: str(config)}
    hostile_dir(shared, form)

    found = runtime.Runtime.from_env(locations.hook_locations(argv, environ))
    assert found.root == runtime.tmp_fallback_path()
    assert found.root.startswith(str(tmp_path / "user"))


def test_a_recorded_runtime_dir_that_is_gone_is_claimed_before_another_user_can(
    tmp_path, monkeypatch
) -> None:
    """After a reboot emptied /tmp: a hook of a set-up bridge creates the dir (private) before
    using it; if another user took the name between its look and its mkdir, it is refused."""
    monkeypatch.setattr(runtime, "user_home", lambda: str(tmp_path / "user"))
    home = tmp_path / "home"
    rt = runtime.Runtime(str(tmp_path / "shared"), str(tmp_path / "state"))
    locations.record_locations(rt, {runtime.ENV_HOME: str(home)})
    env = locations.hook_locations(["--home", str(home), "-"], {})
    assert not (tmp_path / "shared").exists()  # a hook that has no work creates nothing
    locations.claim_runtime_dir(env)
    assert env[runtime.ENV_RUNTIME_DIR] == str(tmp_path / "shared")
    info = os.lstat(tmp_path / "shared")
    assert info.st_uid == os.geteuid() and info.st_mode & 0o777 == 0o700

    os.rmdir(tmp_path / "shared")
    env = locations.hook_locations(["--home", str(home), "-"], {})
    hostile_dir(tmp_path / "shared", "open")  # the race lost
    locations.claim_runtime_dir(env)
    assert env[runtime.ENV_RUNTIME_DIR] == runtime.tmp_fallback_path()
