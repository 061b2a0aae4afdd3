"""Helpers to run the real Claude Code CLI offline (against ``fake_anthropic``) and in tmux.

What the CLI needs to run unattended, measured: ``.claude.json`` with onboarding done
(``hasCompletedOnboarding``), the project's folder trusted (``hasTrustDialogAccepted``) and the
API key approved (``customApiKeyResponses``, its last 20 characters), else it stops at those
screens; and the environment of :func:`claude_env` (comments there).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

CLAUDE_VERSION = "2.1.332"  # the pinned version (bridge/claude/versions.py: PINNED)
NPM_CACHE = Path(".cache")  # where a checkout keeps its Claude Code CLIs, one prefix per version
# The real Bun-compiled binary is hundreds of MB; a skipped postinstall leaves a tiny stub.
_MIN_REAL_BINARY = 10 * 1024 * 1024


def cache_dir(version: str | None = None) -> Path:
    """The relative npm prefix of a version (default: the pinned one):
    ``.cache/claude-code-<version>``, where scripts/test.sh installs it. One prefix per
    version, the pinned one included, so checkouts pinned to different versions can share
    one ``.cache`` without reinstalling each other's CLI."""
    return NPM_CACHE / f"claude-code-{version or CLAUDE_VERSION}"


def npm_prefix(version: str | None = None) -> Path:
    """The npm prefix holding the CLI (the pinned one unless ``version`` names another): for
    the pinned one ``$CLAUDE_CODE_PREFIX`` wins; else the first :func:`cache_dir` found in the
    current directory or one of its parents, else in a parent of this package (an editable
    install in a checkout), else the one in the current directory."""
    override = os.environ.get("CLAUDE_CODE_PREFIX")
    if override and (version is None or version == CLAUDE_VERSION):
        return Path(override)
    relative = cache_dir(version)
    cwd = Path.cwd()
    here = Path(__file__).resolve().parent
    for folder in (cwd, *cwd.parents, *here.parents):
        if (folder / relative).is_dir():
            return folder / relative
    return cwd / relative


def install_hint(version: str | None = None) -> str:
    """The command that installs the CLI where :func:`claude_binary` looks."""
    return (
        f"npm install --prefix {npm_prefix(version)}"
        f" @anthropic-ai/claude-code@{version or CLAUDE_VERSION} (or set CLAUDE_BIN)"
    )


class ClaudeNotInstalled(RuntimeError):
    """The pinned CLI binary is missing."""


def claude_binary(version: str | None = None) -> str:
    """Path of the claude binary (pinned unless ``version`` names another): $CLAUDE_BIN (pinned
    only), the npm wrapper, or the platform package binary."""
    override = os.environ.get("CLAUDE_BIN")
    if override and (version is None or version == CLAUDE_VERSION):
        if not os.access(override, os.X_OK):
            raise ClaudeNotInstalled(f"CLAUDE_BIN={override} is not executable")
        return override
    modules = npm_prefix(version) / "node_modules"
    candidates = [
        modules / ".bin" / "claude",
        modules / "@anthropic-ai" / "claude-code-linux-x64" / "claude",
    ]
    for candidate in candidates:
        if _is_real_binary(candidate):
            return str(candidate)
    raise ClaudeNotInstalled(
        f"claude {version or CLAUDE_VERSION} not found under {modules};"
        f" run: {install_hint(version)}"
    )


def _is_real_binary(path: Path) -> bool:
    try:
        real = path.resolve(strict=True)
    except (FileNotFoundError, RuntimeError):
        return False
    return real.stat().st_size >= _MIN_REAL_BINARY and os.access(real, os.X_OK)


def claude_available(version: str | None = None) -> bool:
    try:
        claude_binary(version)
    except ClaudeNotInstalled:
        return False
    return True


# -- HOME preparation ------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    return json.loads(path.read_text() or "{}")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _project_entry() -> dict[str, Any]:
    return {
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
        "projectOnboardingSeenCount": 1,
        "allowedTools": [],
    }


def claude_json(
    projects: list[Path],
    api_key: str,
    version: str | None = None,
    trust: bool = True,
    accept_bypass: bool = True,
    approve_key: bool = True,
) -> dict[str, Any]:
    """The ``$HOME/.claude.json`` keys that skip every first-run screen (§2.2). Without ``trust``
    the projects are not marked trusted (the folder-trust dialog shows); without
    ``accept_bypass`` bypass-permissions mode shows its warning on first use; without
    ``approve_key`` Claude Code asks whether to use the API key in the environment."""
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": version or CLAUDE_VERSION,
        "lastReleaseNotesSeen": version or CLAUDE_VERSION,
        "theme": "dark",
        "autoUpdates": False,
        "numStartups": 2,
        "hasSeenAutoDefaultNotice": True,
        "hasSeenAutoDefaultNudge": True,
        "bypassPermissionsModeAccepted": True,
        # "Try the new fullscreen renderer?" (2.1.3xx) stops at 3 impressions; "Not now" sets 3.
        # CLAUDE_CODE_FORCE_FULLSCREEN_UPSELL=1 still shows it (a test of that screen).
        "fullscreenUpsellSeenCount": 3,
        # The CLI remembers approval by the last 20 chars of the trimmed key.
        "customApiKeyResponses": {"approved": [api_key.strip()[-20:]], "rejected": []},
        # Trust is keyed by the realpath of the directory claude starts in.
        "projects": {os.path.realpath(p): _project_entry() for p in projects} if trust else {},
    }
    if not accept_bypass:
        del config["bypassPermissionsModeAccepted"]
    if not approve_key:
        del config["customApiKeyResponses"]
    return config


SETTINGS_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def prepare_home(
    home: Path,
    projects: list[Path],
    api_key: str = "sk-test",
    version: str | None = None,
    trust: bool = True,
    accept_bypass: bool = True,
    approve_key: bool = True,
) -> None:
    """Write ``.claude.json`` and merge ``.claude/settings.json`` so claude starts with no dialogs
    (``trust=False``: the folder-trust dialog for ``projects``; ``accept_bypass=False``: the
    bypass-permissions warning on first use; ``approve_key=False``: the API key question).

    Both files are merged into existing content (the bridge's ``hooks install`` writes hooks into
    settings.json, and prepare_home may be called again for more projects).
    """
    home.mkdir(parents=True, exist_ok=True)
    config_path = home / ".claude.json"
    config = _read_json(config_path)
    fresh = claude_json(projects, api_key, version, trust, accept_bypass, approve_key)
    projects_map = {**config.get("projects", {}), **fresh.pop("projects")}
    _write_json(config_path, {**config, **fresh, "projects": projects_map})
    settings_path = home / ".claude" / "settings.json"
    _write_json(settings_path, merge_settings(_read_json(settings_path)))


def merge_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Add explicit manual permission mode (2.1.3xx defaults to auto mode) and the env block."""
    permissions = settings.setdefault("permissions", {})
    permissions.setdefault("defaultMode", "default")
    permissions.setdefault("allow", [])
    permissions.setdefault("deny", [])
    settings["env"] = {**SETTINGS_ENV, **settings.get("env", {})}
    return settings


def claude_env(
    home: Path,
    api_base_url: str,
    tmpdir: Path,
    extra: Mapping[str, str] | None = None,
    version: str | None = None,
    oauth_token: str | None = None,
    claude_dir: str | None = None,
) -> dict[str, str]:
    """A clean environment for the CLI (only PATH comes from the parent process); ``claude``
    on its PATH is the pinned CLI, or ``version``, or the one in ``claude_dir`` (a user's own,
    for ``discord-bridge selftest``).

    It logs in with the API key ``sk-test``, or with ``oauth_token`` as a claude.ai subscriber
    (``CLAUDE_CODE_OAUTH_TOKEN``, no API key): only a subscriber sees usage limits
    (``fake_anthropic.limits``); the banner then says "Claude API" and the default model is
    Sonnet (2.1.332, measured; no other request reaches the fake)."""
    runtime = tmpdir / f"claude-runtime-{uuid.uuid4().hex[:8]}"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    bin_dir = claude_dir or str(Path(claude_binary(version)).parent)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", os.defpath)]),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "ANTHROPIC_BASE_URL": api_base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_TMPDIR": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
        # As root the CLI refuses bypass mode unless it believes it is sandboxed.
        "IS_SANDBOX": "1",
        **SETTINGS_ENV,
    }
    if oauth_token is not None:
        del env["ANTHROPIC_API_KEY"]
        env["CLAUDE_CODE_OAUTH_TOKEN"] = oauth_token
    env.update(extra or {})
    return env


# -- tmux --------------------------------------------------------------------------------------

BUSY_MARKER = "esc to interrupt"
PASTE_MARK = "[Pasted text #"
PLACEHOLDERS = ("Press up to edit queued messages",)  # shown in an empty box
_RULE_RE = re.compile(r"^\s*─{4}")  # a line starting with a rule, as bridge.tmux reads it


def screen_is_ready(screen: str) -> bool:
    """True when the CLI shows an empty input box: ``❯`` right below the second-to-last
    ``────`` rule, nothing typed (dialogs' ``❯ 1. Yes`` does not sit right below a rule).

    That is start-up readiness; the box is also shown while a turn runs (see screen_is_idle).
    The bridge has its own reading (``bridge.claude.screen.is_prompt_ready``);
    tests/test_fake_anthropic.py checks that both agree.
    """
    lines = screen.splitlines()
    rules = [i for i, line in enumerate(lines) if _RULE_RE.match(line)]
    if len(rules) < 2 or rules[-1] == rules[-2] + 1:
        return False
    first = lines[rules[-2] + 1].strip()
    return first.startswith("❯") and input_box(screen) in ("", *PLACEHOLDERS)


def screen_is_idle(screen: str) -> bool:
    """Ready and no turn running: the input box stays empty and visible during a turn too, but
    the footer then says "esc to interrupt"."""
    return screen_is_ready(screen) and BUSY_MARKER not in screen


def input_box(screen: str) -> str:
    """Text inside the prompt box (between the last two ``────`` rules), ``❯`` removed."""
    lines = screen.splitlines()
    rules = [i for i, line in enumerate(lines) if _RULE_RE.match(line)]
    if len(rules) < 2:
        return ""
    inner = "\n".join(lines[rules[-2] + 1 : rules[-1]])
    return inner.replace("❯", "", 1).replace("\u00a0", " ").strip()


def _compact(text: str) -> str:
    # Wrapping and indentation change whitespace on screen; compare without it.
    return re.sub(r"\s+", "", text)


def box_shows(screen: str, text: str) -> bool:
    """True when the prompt box ends with ``text`` (whitespace-insensitive)."""
    tail = _compact(text)[-40:]
    return _compact(input_box(screen)).endswith(tail)


class TmuxServer:
    """A private tmux server (``-L socket -f /dev/null``) that never touches the user's tmux."""

    def __init__(self, socket_name: str | None = None) -> None:
        if shutil.which("tmux") is None:
            raise FileNotFoundError("tmux is not installed")
        self.socket_name = socket_name or f"cc-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # The server inherits this env at start-up; keep it minimal so panes start clean.
        self._server_env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}

    def tmux(self, *args: str, check: bool = True) -> str:
        """Run a tmux command against this server and return stdout."""
        cmd = ["tmux", "-L", self.socket_name, "-f", "/dev/null", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, env=self._server_env)
        if check and done.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)} failed: {done.stderr.strip()}")
        return done.stdout

    def new_session(
        self,
        name: str,
        cwd: Path | str,
        command: str | list[str],
        env: Mapping[str, str] | None = None,
        width: int = 200,
        height: int = 50,
    ) -> str:
        """Start ``command`` in a detached session; returns the target (the session name)."""
        # tmux overrides PATH (from the client) and TERM (default-terminal) even over
        # `new-session -e`, so the env is applied by `env` inside the pane instead.
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        assignments = [f"{key}={value}" for key, value in (env or {}).items()]
        shell_cmd = "exec " + shlex.join(["env", *assignments, *argv])
        # remain-on-exit keeps the last screen when claude dies, so failures stay diagnosable.
        self.tmux(
            "set-option",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "set-option",
            "-s",
            "focus-events",
            "on",
            ";",
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd),
            shell_cmd,
        )
        return name

    def capture(self, target: str) -> str:
        """The visible pane text."""
        return self.tmux("capture-pane", "-p", "-t", target)

    def submit(self, target: str, text: str, timeout: float = 10.0) -> None:
        """Type ``text``, wait until the prompt box shows all of it, press Enter, confirm it left.

        Under CPU contention the CLI can read several typed chunks at once, classify them as a
        paste (``[Pasted text #1]``) and swallow an Enter sent right after; waiting for the echo
        avoids the lost Enter and makes a paste a clear error instead of a silent hang.
        """
        self.send_text(target, text)
        screen = self.wait_for(target, lambda s: box_shows(s, text) or PASTE_MARK in s, timeout)
        if not box_shows(screen, text):
            raise RuntimeError(f"claude took typed input as a paste; screen:\n{screen}")
        self.send_keys(target, "Enter")
        try:
            self.wait_for(target, lambda s: not box_shows(s, text), timeout=2.0)
        except TimeoutError:
            self.send_keys(target, "Enter")  # Enter was dropped; the box still holds the text

    def send_keys(self, target: str, *keys: str) -> None:
        """Send tmux key names (``Enter``, ``Escape``, ``C-u``, ``BTab`` ...)."""
        self.tmux("send-keys", "-t", target, *keys)

    def send_text(self, target: str, text: str, chunk: int = 100, pause: float = 0.03) -> None:
        """Type ``text`` literally in small chunks so the CLI does not treat it as a paste.

        A single fast burst of ~1,200 chars becomes ``<pasted_content>``; ≤100-char chunks
        30 ms apart arrive verbatim. A literal LF arrives as Ctrl+J (newline, no submit).
        """
        for start in range(0, len(text), chunk):
            if start:
                time.sleep(pause)
            self.tmux("send-keys", "-t", target, "-l", "--", text[start : start + chunk])

    def wait_for(
        self, target: str, condition: str | Callable[[str], bool], timeout: float = 30.0
    ) -> str:
        """Poll the screen until ``condition`` (substring or predicate) holds; return the screen."""
        check = condition if callable(condition) else (lambda screen: condition in screen)
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture(target)
            if check(screen):
                return screen
            time.sleep(0.1)
        raise TimeoutError(
            f"tmux {target}: {condition!r} not seen in {timeout}s; screen:\n{screen}"
        )

    def wait_ready(self, target: str, timeout: float = 30.0) -> str:
        """Wait for the empty prompt box (``❯`` between two ``────`` rules)."""
        return self.wait_for(target, screen_is_ready, timeout)

    def wait_idle(self, target: str, timeout: float = 30.0, containing: str = "") -> str:
        """Wait until no turn runs, the prompt box is empty and the screen shows ``containing``.

        Right after Enter the screen can look idle before the spinner starts, so pass the
        expected reply as ``containing`` to wait for the end of *this* turn.
        """
        return self.wait_for(target, lambda s: containing in s and screen_is_idle(s), timeout)

    def kill(self) -> None:
        """Kill this private server (and every claude in it) and remove its socket file."""
        self.tmux("kill-server", check=False)
        # tmux leaves the socket file behind when its server is killed.
        socket = Path("/tmp") / f"tmux-{os.getuid()}" / self.socket_name
        socket.unlink(missing_ok=True)

    def __enter__(self) -> TmuxServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
