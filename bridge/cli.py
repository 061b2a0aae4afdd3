"""``discord-bridge``: run the bot, install the Claude Code hooks, diagnose a set-up."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from bridge import __version__, config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="discord-bridge",
        description="Run the bot, install the hooks, try it locally, diagnose a set-up.",
    )
    parser.add_argument("--version", action="version", version=f"discord-bridge {__version__}")
    parser.add_argument("--config", help="config file (default $DISCORD_BRIDGE_HOME/config.json)")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run the bot in the foreground")
    run.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    trial = commands.add_parser(
        "try",
        help="try the bridge in a browser on a local Discord emulator (no Discord bot needed)",
    )
    trial.add_argument("project", nargs="?", help="project directory (default: the current one)")
    trial.add_argument(
        "--listen",
        metavar="ADDR",
        help="address of the page, e.g. 0.0.0.0 to reach it from a phone on this network "
        "(default 127.0.0.1; the page always needs the token in its printed URL)",
    )
    trial.add_argument("--port", type=int, help="port of the page (default 8765)")
    trial.add_argument("--no-browser", action="store_true", help="do not open a browser")
    trial.add_argument(
        "--worktrees",
        action="store_true",
        help="threads work in their own git worktrees (the project must be a git repository)",
    )
    trial.add_argument(
        "--budget",
        metavar="USD",
        help="a spend budget per session, in dollars (e.g. 0.50): a warning at 80 %%, at 100 %% "
        "Claude stops before its next tool call and asks Continue / Stop (default: none)",
    )
    trial.add_argument(
        "--demo",
        action="store_true",
        help="look around for nothing: your Claude Code (or Codex, with --agent codex) answered "
        "by a scripted model, in a throwaway project (no login, no usage, nothing of yours "
        "touched)",
    )
    trial.add_argument(
        "--agent",
        choices=("claude", "codex"),
        default="claude",
        help="the coding agent the project runs: Claude Code (default) or OpenAI's Codex CLI",
    )
    trial.add_argument("-v", "--verbose", action="store_true", help="debug logging (to the log)")

    hooks = commands.add_parser("hooks", help="manage Claude Code's (and Codex's) hook entries")
    hooks.add_argument("action", choices=["install", "uninstall"])
    hooks.add_argument("--settings", help="settings.json (default ~/.claude/settings.json)")
    hooks.add_argument(
        "--codex-hooks", help="Codex's hooks.json (default ~/.codex/hooks.json, if ~/.codex exists)"
    )

    commands.add_parser("doctor", help="check the set-up, one line per check")

    selftest = commands.add_parser(
        "selftest",
        help="run your Claude Code through the bridge end to end, offline, in a throwaway set-up "
        "(about 15 s)",
    )
    selftest.add_argument(
        "--claude",
        metavar="COMMAND",
        help="the Claude Code to check (default: the config's claudeCommand, else claude on PATH)",
    )
    selftest.add_argument(
        "--codex",
        metavar="COMMAND",
        help="also run a Codex round with this codex (default: the config's codexCommand, "
        "when a project uses Codex)",
    )
    selftest.add_argument(
        "--keep", action="store_true", help="keep the throwaway directory even when all pass"
    )

    service = commands.add_parser(
        "service", help="start the bot at login/boot (systemd user unit; launchd on macOS)"
    )
    service.add_argument("action", choices=["install", "uninstall", "status"])
    service.add_argument("--no-start", action="store_true", help="install without starting it")

    args = parser.parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "hooks":
        return cmd_hooks(args)
    if args.command == "try":
        return cmd_try(args)
    if args.command == "service":
        return cmd_service(args)
    if args.command == "selftest":
        from bridge import selftest as checks

        return checks.run(checks.Options(args.claude, args.config, args.keep, args.codex))
    from bridge.doctor import run_checks

    return run_checks(args.config)


def cmd_run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("discord").setLevel(logging.INFO if args.verbose else logging.WARNING)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # one line per file change
    from bridge import placeholders
    from bridge.state import locations, runtime

    path = args.config or runtime.config_path()
    found = placeholders.find_in_file(path)
    if found:  # the example config: say what to fill in instead of trying the network
        print(f"discord-bridge: {placeholders.explain(path, found)}", file=sys.stderr)
        return 2
    try:
        cfg = config.load(args.config)
    except config.ConfigError as err:
        print(f"discord-bridge: {err}", file=sys.stderr)
        return 2
    try:  # the hooks of the sessions it starts may read this file (DISCORD_BRIDGE_CONFIG)
        locations.register_config(path)
    except OSError as err:
        print(f"discord-bridge: cannot register {path} for the hooks: {err}", file=sys.stderr)
    from bridge.bot.app import run_bridge
    from bridge.bot.login import PrivilegedIntentsRequired, TokenRejected
    from bridge.state.runtime import UnsafeRuntimeDir

    try:
        asyncio.run(run_bridge(cfg))
    except UnsafeRuntimeDir as err:
        print(f"discord-bridge: runtime directory refused: {err}", file=sys.stderr)
        return 2
    except TokenRejected as err:
        print(f"discord-bridge: {err.explain(cfg.path)}", file=sys.stderr)
        return 2
    except PrivilegedIntentsRequired:
        print(
            "discord-bridge: enable the Message Content Intent for the bot in the Developer "
            "Portal (Bot → Privileged Gateway Intents)",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def cmd_try(args: argparse.Namespace) -> int:
    from bridge import tryout, tryout_setup

    try:
        host, port = tryout_setup.parse_listen(args.listen, args.port)
        budget = tryout_setup.parse_budget(args.budget)
    except tryout_setup.TryError as err:
        print(f"discord-bridge try: {err}", file=sys.stderr)
        return 2
    if args.demo:
        return try_demo(args, host, port)
    options = tryout.Options(
        args.project,
        host,
        port,
        not args.no_browser,
        args.verbose,
        args.worktrees,
        budget,
        args.agent,
    )
    return tryout.run(options)


def try_demo(args: argparse.Namespace, host: str, port: int) -> int:
    from bridge import demo

    # The demo's project is its own: a scripted model never edits a directory of the user's.
    extras = (("PROJECT_DIR", args.project), ("--worktrees", args.worktrees))
    given = [flag for flag, on in (*extras, ("--budget", args.budget)) if on]
    if given:
        why = (
            f"--demo runs in a throwaway project of its own, without {', '.join(given)}: its "
            "model is scripted and must never edit your files (`discord-bridge try "
            "PROJECT_DIR` is the real Claude)"
        )
        print(f"discord-bridge try: {why}", file=sys.stderr)
        return 2
    return demo.run(demo.Options(host, port, not args.no_browser, args.agent))


def cmd_hooks(args: argparse.Namespace) -> int:
    """Claude Code's settings.json; and Codex's hooks.json where Codex is set up (its folder
    exists, or ``--codex-hooks`` names the file)."""
    import os

    from bridge.agents import agent_for

    files = [(agent_for("claude"), args.settings or agent_for("claude").hooks_path())]
    codex = agent_for("codex")
    codex_path = args.codex_hooks or codex.hooks_path()
    if args.codex_hooks or os.path.isdir(os.path.dirname(codex_path)):
        files.append((codex, codex_path))
    for agent, path in files:
        try:
            if args.action == "install":
                changed = agent.install_hooks(path)
                verb = "installed in" if changed else "already up to date in"
            else:
                changed = agent.uninstall_hooks(path)
                verb = "removed from" if changed else "not present in"
        except (ValueError, OSError) as err:
            print(f"discord-bridge: {err}", file=sys.stderr)
            return 1
        print(f"discord-bridge hooks {verb} {path}")
    return 0


def cmd_service(args: argparse.Namespace) -> int:
    from bridge import service

    path = service.config_file(args.config)
    if args.action == "status":
        healthy, lines = service.describe(service.status(path))
        print("\n".join(lines))
        return 0 if healthy else 1
    try:
        if args.action == "install":
            done = service.install(path, start=not args.no_start)
        else:
            done = service.uninstall()
    except OSError as err:
        print(f"discord-bridge: {err}", file=sys.stderr)
        return 1
    print("\n".join(done.lines))
    return done.code


if __name__ == "__main__":
    sys.exit(main())
