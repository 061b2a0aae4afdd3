"""Every Claude Code session running in a tmux pane on this machine, the bridge's or not.

``/sessions`` lists them so one can be adopted (``bridge/sessions/adoption.py``). Where to
look: the tmux servers of this user, i.e. the sockets in tmux's own socket directory
(``$TMUX_TMPDIR``/``/tmp`` + ``tmux-<uid>``, the default socket and every ``-L`` one), taken
only when the directory is this user's and private and the socket is this user's and not
open to others (a socket planted by another local user must not receive our keys). In each
server, ``list-panes -a`` gives every pane's process; a Claude Code session is that process
or one of its descendants (a shell that started ``claude``), found through ``/proc``.

What a session is: its directory (the process's cwd), its Claude ``sessionId`` (from the
CLI's own ``~/.claude/sessions/<pid>.json``, checked against the process's start time;
measured with 2.1.332: written about a second after start, removed at exit; 2.1.197 writes
none), its state read from the screen (working, idle, or a dialog open: ``claude/screen.py``
and ``claude/dialogs.py``), and whether the bridge's hooks are in the user settings that
session reads: measured with 2.1.332, hooks added to ``~/.claude/settings.json`` after the
CLI started fire from its next prompt on (UserPromptSubmit and Stop; its SessionStart has
passed), so installed means active.

One scan costs one ``tmux list-panes`` per socket and one ``capture-pane`` per Claude pane,
and runs only when asked (``/sessions``, Adopt): nothing polls (``bench/adoption_scan.py``).
"""

from __future__ import annotations

import os
import socket as sockets_api
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from bridge.claude.dialogs import read_dialog
from bridge.claude.screen import is_busy
from bridge.sessions import machine_codex as codex_machine
from bridge.sessions.proc_tree import first_in
from bridge.state import private_files
from bridge.state.adoptions import is_session_id
from bridge.state.runtime import ENV_CHANNEL
from bridge.tmux import pane_address

TMUX_TIMEOUT = 2.0  # seconds for one tmux command on a server (a hung server is skipped)
MAX_DEPTH = 4  # process levels below a pane's process searched for Claude Code
PANE_FIELDS = ("pane_id", "pane_pid", "session_name", "window_index", "pane_index", "pane_dead")
CLAUDE_NAMES = ("claude", "claude.exe")
REREADS, REREAD_PAUSE = 10, 0.02  # a session record found empty (mid-write): read again
CAPTURES = 8  # screens read at once (each a tmux process that mostly waits on the server)


@dataclass(frozen=True)
class FoundSession:
    """One Claude Code process in a tmux pane."""

    socket: str  # the tmux server's socket path
    pane_id: str  # ``%<n>`` on that server
    where: str  # ``session:window.pane``, as tmux shows it
    pid: int  # the Claude Code process
    proc_start: str  # its start time (clock ticks after boot): with pid, names it uniquely
    cwd: str
    session_id: str | None  # the conversation's id, if the CLI says (2.1.332 does)
    state: str  # "working", "idle", "dialog open" or "starting"
    hooks: bool  # the bridge's hooks are in the settings this session reads
    bridge: bool  # started by a bridge (its pane carries the bridge's markers)
    agent: str = "claude"  # or "codex": an OpenAI Codex TUI (listed, not adoptable yet)

    @property
    def address(self) -> str:
        """The pane as :class:`bridge.tmux.TmuxSessions` addresses it, socket included."""
        return pane_address(self.socket, self.pane_id)

    @property
    def token(self) -> str:
        """``<pid>-<start>``: what a select option or button names it by (a pid alone could
        be another process's by the time it is clicked)."""
        return f"{self.pid}-{self.proc_start}"


def socket_dir() -> str:
    """tmux's directory of this user's sockets (``$TMUX_TMPDIR`` as tmux reads it)."""
    return os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.geteuid()}")


def user_sockets(directory: str | None = None) -> list[str]:
    """This user's tmux sockets: the directory must be ours and private, each socket ours and
    closed to others (tmux makes the directory 0700 and sockets 0660 / 0770 when attached)."""
    directory = directory or socket_dir()
    try:
        info = os.lstat(directory)
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return []
    found = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            entry = os.lstat(path)
        except OSError:
            continue
        mine = stat.S_ISSOCK(entry.st_mode) and entry.st_uid == os.geteuid()
        if mine and not entry.st_mode & 0o007 and listening(path):
            found.append(path)
    return found


def listening(path: str) -> bool:
    """A server answers at ``path``: tmux leaves the socket file of a killed server behind,
    and asking each such file with a ``tmux`` process costs ~8 ms where a connect costs
    ~0.05 ms (measured on a machine with 200 stale sockets: ``bench/adoption_scan.py``)."""
    probe = sockets_api.socket(sockets_api.AF_UNIX, sockets_api.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def tmux(socket: str, *args: str) -> list[str] | None:
    """A tmux command on the server at ``socket``; None when it is not running or refuses."""
    try:
        done = subprocess.run(
            ["tmux", "-S", socket, *args],
            capture_output=True,
            text=True,
            timeout=TMUX_TIMEOUT,
            env={**os.environ, "TMUX": ""},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.splitlines() if done.returncode == 0 else None


def scan(sockets: list[str] | None = None, with_state: bool = True) -> list[FoundSession]:
    """Every Claude Code process in a live pane of this user's tmux servers; ``with_state``:
    with what each screen shows (a capture each, run side by side: the slow part)."""
    found = []
    fmt = "\t".join("#{" + field + "}" for field in PANE_FIELDS)
    for server in user_sockets() if sockets is None else sockets:
        for line in tmux(server, "list-panes", "-a", "-F", fmt) or []:
            fields = line.split("\t")
            if len(fields) != len(PANE_FIELDS) or fields[5] == "1" or not fields[1].isdigit():
                continue
            pane_id, pane_pid, session, window, index, _ = fields
            pid, agent = claude_in(int(pane_pid)), "claude"
            if pid is None:
                pid, agent = codex_machine.codex_in(int(pane_pid)), "codex"
            if pid is None:
                continue
            where = f"{session}:{window}.{index}"
            session_found = describe(server, pane_id, where, pid, agent)
            if session_found is not None:
                found.append(session_found)
    if with_state and found:
        with ThreadPoolExecutor(min(CAPTURES, len(found))) as pool:
            found = list(pool.map(with_screen_state, found))
    return found


def find(token: str, sockets: list[str] | None = None) -> FoundSession | None:
    """The session a token (:attr:`FoundSession.token`) names, if it still runs (only its
    own screen is read)."""
    for session in scan(sockets, with_state=False):
        if session.token == token:
            return with_screen_state(session)
    return None


def with_screen_state(session: FoundSession) -> FoundSession:
    if session.agent == "codex":
        screen = "\n".join(tmux(session.socket, "capture-pane", "-p", "-t", session.pane_id) or [])
        return replace(session, state=codex_machine.screen_state(screen))
    return replace(session, state=screen_state(session.socket, session.pane_id))


def describe(
    socket: str, pane_id: str, where: str, pid: int, agent: str = "claude"
) -> FoundSession | None:
    start = proc_start(pid)
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    if start is None:
        return None
    env = proc_environ(pid)
    if agent == "codex":
        session_id, hooks = codex_machine.session_id_of(pid), codex_machine.hooks_installed(env)
    else:
        config_dir = claude_config_dir(env)
        session_id = session_id_of(config_dir, pid, start)
        hooks = hooks_installed(config_dir)
    return FoundSession(
        socket=socket,
        pane_id=pane_id,
        where=where,
        pid=pid,
        proc_start=start,
        cwd=cwd,
        session_id=session_id,
        state="unknown",
        hooks=hooks,
        bridge=bool(env.get(ENV_CHANNEL)),
        agent=agent,
    )


def screen_state(socket: str, pane_id: str) -> str:
    screen = "\n".join(tmux(socket, "capture-pane", "-p", "-t", pane_id) or [])
    if read_dialog(screen) is not None:
        return "dialog open"
    if is_busy(screen):
        return "working"
    return "idle" if "❯" in screen else "starting"


# --- /proc -----------------------------------------------------------------------------


def claude_in(pid: int) -> int | None:
    """``pid`` if it is Claude Code, else the first Claude Code among its descendants."""
    return first_in(pid, is_claude, MAX_DEPTH)


def is_claude(pid: int) -> bool:
    """The native CLI runs as ``claude`` (its comm; measured 2.1.332); an npm install's
    ``node …/claude-code/cli.js`` names its package in its command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read(4096).split(b"\0")
    except OSError:
        return False
    first = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    if first in CLAUDE_NAMES:
        return True
    script = argv[1].decode(errors="replace") if len(argv) > 1 else ""
    return first.startswith("node") and "claude-code" in script and script.endswith("cli.js")


def proc_start(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat``: the process's start time, in clock ticks after boot
    (what the CLI's own ``procStart`` holds)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces
    if len(fields) <= 19 or fields[0] in ("Z", "X"):  # exited, not yet reaped: not running
        return None
    return fields[19]


def proc_environ(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read(1 << 20)
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            env[name] = value
    return env


def claude_config_dir(env: dict[str, str]) -> str:
    """Where that Claude Code keeps its settings and session files."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return env["CLAUDE_CONFIG_DIR"]
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


def session_id_of(config_dir: str, pid: int, start: str) -> str | None:
    """The CLI's ``sessions/<pid>.json`` says its conversation, if it is this process's."""
    record = private_files.read_json(os.path.join(config_dir, "sessions", f"{pid}.json"), 1 << 16)
    if not record or str(record.get("procStart")) != start:
        return None
    session_id = record.get("sessionId")
    return session_id if is_session_id(session_id) else None


def hooks_installed(config_dir: str) -> bool:
    """The bridge's hooks are in that session's user settings (so they run: see above)."""
    from bridge.claude import settings

    try:
        events = settings.installed_events(os.path.join(config_dir, "settings.json"))
    except Exception:  # unreadable or not JSON: whatever it holds, not our hooks
        return False
    return "Stop" in events and "PermissionRequest" in events


def running_conversation(session_id: str, config_dir: str) -> int | None:
    """The pid of a Claude Code of this user that has conversation ``session_id`` open now
    (its ``sessions/<pid>.json``, checked against the live process), or None: two CLIs
    appending to one transcript would interleave it."""
    folder = os.path.join(config_dir, "sessions")
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and n[:-5].isdigit()]
    except OSError:
        return None
    for name in names:
        pid = int(name[:-5])
        start = proc_start(pid)
        if start is not None and _settled_session_id(config_dir, pid, start) == session_id:
            return pid
    return None


def _settled_session_id(config_dir: str, pid: int, start: str) -> str | None:
    """:func:`session_id_of` a live process, read again while its record is mid-write:
    Claude Code rewrites ``sessions/<pid>.json`` in place, empty for an instant, and a
    conversation open in that instant must not be taken for closed."""
    path = os.path.join(config_dir, "sessions", f"{pid}.json")
    for _ in range(REREADS):
        if os.path.isfile(path) and os.path.getsize(path) == 0:
            time.sleep(REREAD_PAUSE)
            continue
        break
    return session_id_of(config_dir, pid, start)
