"""The hooks' locations registry: where a hook process finds the bridge home and the runtime
and state dirs the running bot uses, without trusting its environment.

A project's ``.claude/settings.json`` (or Claude itself) can set any variable a hook sees, so
a hook takes its locations from its own command line (written by ``hooks install``:
:func:`hook_args`), else from what the bot recorded in the bridge home when it started
(:func:`record_locations`; ``discord-bridge try``'s bot, per config:
:func:`record_config_locations`), else the defaults with ``~`` from the password database::

    ~/.discord-bridge/ (the bridge home)
      locations.json          the runtime and state dirs the bot uses
      config-locations.json   a registered config's own dirs (``try``'s)
      run-configs             config files ``run --config`` was given (:func:`register_config`)
      adopted-sessions.json   sessions adopted by a running bot of such a config (``adoptions``)
      .<file>.lock            taken by a bot updating config-locations.json, run-configs or
                              adopted-sessions.json (``private_files.Lock``): hooks only read

:func:`hook_locations` is what a hook reads on every call (at most three small private files
and one ``lstat`` of the runtime dir it found). Only the standard library's ``os`` at import.
"""

from __future__ import annotations

import os

from bridge.state import private_files, runtime
from bridge.state.runtime import ENV_CONFIG, ENV_HOME, ENV_RUNTIME_DIR, ENV_STATE_DIR

# A hook cannot trust its environment (a project's .claude/settings.json sets it): it takes
# the bridge home, runtime and state dirs from its command line, written by `hooks install`.
HOOK_FLAGS = (
    ("--home", ENV_HOME),
    ("--runtime-dir", ENV_RUNTIME_DIR),
    ("--state-dir", ENV_STATE_DIR),
)
RUN_CONFIGS = "run-configs"  # in the bridge home: config files `run --config` was given
LOCATIONS = "locations.json"  # in the bridge home: the runtime and state dirs the bot uses
# In the bridge home: registered configs whose bot uses dirs of its own (`discord-bridge try`)
CONFIG_LOCATIONS = "config-locations.json"
# In a hook's locations: the runtime dir it was given but refused (not private and ours)
REFUSED_RUNTIME_DIR = "refused_runtime_dir"
UNCLAIMED_RUNTIME_DIR = "unclaimed_runtime_dir"  # and one that was missing (not created yet)


def hook_args(env: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """What ``hooks install`` writes on each hook's command line: always the bridge home (the
    hooks must find the same config as the bot), and the runtime and state dirs given by
    ``DISCORD_BRIDGE_RUNTIME_DIR`` / ``DISCORD_BRIDGE_STATE_DIR`` when it ran."""
    env = os.environ if env is None else env
    args = ["--home", os.path.abspath(runtime.bridge_home(env))]
    for flag, name in HOOK_FLAGS[1:]:
        if env.get(name):
            args += [flag, os.path.abspath(env[name])]
    return args


def record_locations(
    rt: runtime.Runtime, env: dict[str, str] | os._Environ[str] | None = None
) -> None:
    """The bot tells the hooks which runtime and state dirs it uses (hooks installed without
    ``--runtime-dir`` / ``--state-dir`` read them here, not from their environment)."""
    from bridge import fastjson

    home = runtime.ensure_private_dir(runtime.bridge_home(env))
    record = {"runtime_dir": os.path.abspath(rt.root), "state_dir": os.path.abspath(rt.state_root)}
    path = os.path.join(home, LOCATIONS)
    if private_files.read_json(path, 1 << 12) != record:
        private_files.write_atomic(path, fastjson.dumps(record).encode())


def home_bot_dirs(env: dict[str, str] | os._Environ[str] | None = None) -> runtime.Runtime | None:
    """The runtime and state dirs the bridge home's bot recorded (:func:`record_locations`),
    or None if none did."""
    path = os.path.join(runtime.bridge_home(env), LOCATIONS)
    recorded = private_files.read_json(path, 1 << 12) or {}
    dirs = recorded.get("runtime_dir"), recorded.get("state_dir")
    if not all(isinstance(d, str) and os.path.isabs(d) for d in dirs):
        return None
    return runtime.Runtime(*dirs)


def hook_locations(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The locations a hook process may trust, as an env dict for :func:`runtime.config_path`,
    :func:`runtime.runtime_dir_path` and :func:`runtime.bridge_home`.

    The bridge home, runtime and state dirs come from the hook's own command line
    (``--home``, ``--runtime-dir``, ``--state-dir``), else from what the bot recorded in the
    bridge home when it started (``locations.json``), else the defaults, with ``~`` from the
    password database; ``$DISCORD_BRIDGE_CONFIG`` only when it names a file that
    ``run --config`` registered in that bridge home. Nothing else is read from the
    environment (a project's settings, or Claude itself, can set it).

    A runtime dir found that way that is not a private directory of ours (after a reboot
    another user may have created ``/tmp/discord-bridge-<uid>`` first) is refused: the hooks
    use :func:`runtime.tmp_fallback_path` instead, as the bot does, and ``refused_runtime_dir`` says
    which was refused. One that is missing is left to :func:`claim_runtime_dir`.
    """
    env = {"HOME": runtime.user_home()}
    for flag, name in HOOK_FLAGS:
        if flag in argv[:-1]:
            env[name] = argv[argv.index(flag) + 1]
    # Not $XDG_RUNTIME_DIR / $XDG_STATE_HOME either: the dirs the running bot recorded, so the
    # hooks' decision files, hand-off socket and records are the ones the bot reads.
    recorded = (
        private_files.read_json(os.path.join(runtime.bridge_home(env), LOCATIONS), 1 << 12) or {}
    )
    for key, name in (("runtime_dir", ENV_RUNTIME_DIR), ("state_dir", ENV_STATE_DIR)):
        value = recorded.get(key)
        if name not in env and isinstance(value, str) and os.path.isabs(value):
            env[name] = value
    wanted = environ.get(ENV_CONFIG)
    if wanted:
        use_config(env, wanted)
    check_runtime_dir(env)
    return env


def use_config(env: dict[str, str], wanted: str) -> bool:
    """Point a hook's locations ``env`` at config file ``wanted``, if ``run --config`` (or
    ``try``) registered it in that bridge home, with the dirs its bot recorded for it
    (``config-locations.json``: ``try``'s own), else the dirs ``env`` has. False (``env``
    untouched) for a file that is not registered. The caller checks the runtime dir after
    (:func:`check_runtime_dir`)."""
    if os.path.abspath(wanted) not in registered_configs(env):
        return False
    env[ENV_CONFIG] = os.path.abspath(wanted)
    # A bot with its own dirs for this config (`try`) recorded them: they win.
    mapping = (
        private_files.read_json(os.path.join(runtime.bridge_home(env), CONFIG_LOCATIONS), 1 << 16)
        or {}
    )
    own = mapping.get(env[ENV_CONFIG])
    for key, name in (("runtime_dir", ENV_RUNTIME_DIR), ("state_dir", ENV_STATE_DIR)):
        value = own.get(key) if isinstance(own, dict) else None
        if isinstance(value, str) and os.path.isabs(value):
            env[name] = value
    return True


def check_runtime_dir(env: dict[str, str]) -> None:
    """Refuse the runtime dir ``env`` names unless it is a private directory of ours (see
    :func:`hook_locations`); note one that is missing for :func:`claim_runtime_dir`."""
    env.pop(UNCLAIMED_RUNTIME_DIR, None)
    chosen = env.get(ENV_RUNTIME_DIR)
    found = runtime.is_private_dir(chosen) if chosen else True
    if found is None and chosen:  # gone (a reboot): claim_runtime_dir() creates it, if needed
        env[UNCLAIMED_RUNTIME_DIR] = chosen
    elif not found:
        _refuse_runtime_dir(env)


def claim_runtime_dir(env: dict[str, str]) -> None:
    """Create the hook's runtime dir (private) if :func:`hook_locations` found it missing,
    before another local user can take the name; if one did meanwhile, refuse it."""
    path = env.pop(UNCLAIMED_RUNTIME_DIR, None)
    if path is None:
        return
    try:
        os.mkdir(path, 0o700)
    except FileNotFoundError:  # no parent either: Runtime.ensure() creates both, private
        pass
    except OSError:  # taken meanwhile (or cannot be created here): whose is it now?
        if not runtime.is_private_dir(path):
            _refuse_runtime_dir(env)


def _refuse_runtime_dir(env: dict[str, str]) -> None:
    # Someone else's (a reboot emptied /tmp and another user created the name first), open to
    # others, or a link: tool command lines, assistant text and hand-off wake-ups must not go
    # there. The private fallback is where the bot goes too when it starts.
    env[REFUSED_RUNTIME_DIR] = env[ENV_RUNTIME_DIR]
    env[ENV_RUNTIME_DIR] = runtime.tmp_fallback_path(env)


def record_config_locations(
    config: str, rt: runtime.Runtime, env: dict[str, str] | os._Environ[str] | None = None
) -> None:
    """A bot that keeps its runtime and state apart from the bridge home's bot (``discord-bridge
    try``) records its dirs for its own config, instead of :func:`record_locations`: hooks of
    the sessions it starts (``$DISCORD_BRIDGE_CONFIG``, registered) use them; every other
    hook keeps using the home's."""
    from bridge import fastjson

    home = runtime.ensure_private_dir(runtime.bridge_home(env))
    path = os.path.join(home, CONFIG_LOCATIONS)
    mine = {"runtime_dir": os.path.abspath(rt.root), "state_dir": os.path.abspath(rt.state_root)}
    with private_files.Lock(path):  # two `try` bots starting at once: both configs kept
        mapping = private_files.read_json(path, 1 << 16) or {}
        if mapping.get(os.path.abspath(config)) != mine:
            mapping[os.path.abspath(config)] = mine
            private_files.write_atomic(path, fastjson.dumps(mapping).encode())


def registered_configs(env: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """Config files the bot was started with (``run --config``), listed in the bridge home."""
    try:
        data = private_files.read_private(
            os.path.join(runtime.bridge_home(env), RUN_CONFIGS), 1 << 16
        )
    except OSError:
        return []
    return [line for line in data.decode(errors="replace").splitlines() if line]


def register_config(path: str, env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Let the hooks of this bridge home read ``path`` (``run --config``); no-op for the
    default config. The list is private and written atomically."""
    path = os.path.abspath(path)
    default = os.path.abspath(runtime.config_path({**(env or os.environ), ENV_CONFIG: ""}))
    if "\n" in path or path == default:
        return
    if path in registered_configs(env):
        return
    home = runtime.bridge_home(env)
    os.makedirs(home, 0o700, exist_ok=True)
    with private_files.Lock(os.path.join(home, RUN_CONFIGS)):  # two registering at once
        known = registered_configs(env)
        if path in known:
            return
        lines = [*known, path][-100:]
        data = ("\n".join(lines) + "\n").encode()
        private_files.write_atomic(os.path.join(home, RUN_CONFIGS), data)
