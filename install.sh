#!/usr/bin/env bash
# One-command set-up for discord-bridge: checks prerequisites, creates a virtualenv, installs
# the package, registers the Claude Code hooks, creates the config file, runs the doctor.
# Safe to run again: every step checks what is already there.
#   --service      also install the login/boot service (discord-bridge service install)
#   --no-service   do not ask about it (without either, it asks only when run from a terminal)
#   --voice        also install voice-message transcription (faster-whisper, the [voice] extra)
#   --preview      also install /preview's browser driver (playwright, the [preview] extra)
set -euo pipefail

service=ask
voice=no
preview=no
for arg in "$@"; do
  case "$arg" in
    --voice) voice=yes ;;
    --preview) preview=yes ;;
    --service) service=yes ;;
    --no-service) service=no ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) printf 'error: unknown option %s (try --help)\n' "$arg" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
home_dir="${DISCORD_BRIDGE_HOME:-$HOME/.discord-bridge}"
venv="${DISCORD_BRIDGE_VENV:-$home_dir/venv}"
bin_dir="${DISCORD_BRIDGE_BIN_DIR:-$HOME/.local/bin}"

say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# --- prerequisites ----------------------------------------------------------------------
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      python="$(command -v "$candidate")"; break
    fi
  done
fi
[ -n "$python" ] || die "Python 3.11 or newer is required (e.g. apt-get install python3 python3-venv)."
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  die "$python lacks venv/ensurepip (Debian/Ubuntu: apt-get install python3-venv)."
command -v tmux >/dev/null 2>&1 || die "tmux 3.0 or newer is required (apt-get install tmux / brew install tmux)."
tmux_version="$(tmux -V | sed -E 's/[^0-9]*([0-9]+)\.([0-9]+).*/\1 \2/')"
read -r major minor <<<"$tmux_version"
[ "${major:-0}" -ge 3 ] || die "tmux $(tmux -V) is too old: 3.0 or newer is required."
if ! command -v claude >/dev/null 2>&1; then
  printf 'note: Claude Code is not installed yet (the doctor at the end says how)\n'
fi

# --- virtualenv and package -------------------------------------------------------------
mkdir -p "$home_dir"
chmod 700 "$home_dir"
if [ ! -x "$venv/bin/python" ]; then
  say "creating virtualenv $venv"
  "$python" -m venv "$venv"
fi
say "installing discord-bridge into $venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# The Discord emulator (packages/discord-emulator) comes along: `discord-bridge try` runs on
# it; `discord-bridge selftest` runs on it and on the fake Messages API (packages/fake-anthropic),
# and Codex on the fake Responses API (packages/fake-openai), as `try --demo` does.
parts=("$here/packages/discord-emulator" "$here/packages/fake-anthropic" "$here/packages/fake-openai")
extras=()
if [ "$voice" = yes ]; then
  say "with voice messages: faster-whisper (its speech model is fetched on the first voice message)"
  extras+=(voice)
fi
if [ "$preview" = yes ]; then
  say "with /preview: playwright (it drives a Chromium already installed)"
  extras+=(preview)
fi
if [ "${#extras[@]}" -gt 0 ]; then
  "$venv/bin/python" -m pip install --quiet "${parts[@]}" "$here[$(IFS=,; echo "${extras[*]}")]"
else
  "$venv/bin/python" -m pip install --quiet "${parts[@]}" "$here"
fi
if [ "$preview" = yes ] && ! { [ -x /usr/bin/chromium ] || [ -x /usr/bin/chromium-browser ] ||
    command -v chromium >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; }; then
  printf 'note: /preview needs a Chromium: apt-get install chromium (Debian, Ubuntu), or: %s install chromium\n' "$venv/bin/playwright"
fi
mkdir -p "$bin_dir"
ln -sf "$venv/bin/discord-bridge" "$bin_dir/discord-bridge"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) printf 'note: add %s to your PATH to run discord-bridge directly\n' "$bin_dir" ;;
esac

# --- hooks and config -------------------------------------------------------------------
say "registering the Claude Code hooks"
"$venv/bin/discord-bridge" hooks install
config="$home_dir/config.json"
if [ ! -e "$config" ]; then
  say "creating $config from config.example.json (edit it: token, ids, project paths)"
  (umask 077 && cp "$here/config.example.json" "$config")
fi
chmod 600 "$config"

# --- service (start at login/boot) -----------------------------------------------------
if [ "$service" = ask ] && [ -t 0 ]; then
  read -r -p "Start discord-bridge at login/boot as a user service (systemd/launchd)? [y/N] " answer || true
  case "${answer:-}" in [yY]|[yY][eE][sS]) service=yes ;; esac
fi
if [ "$service" = yes ]; then
  say "installing the login/boot service"
  "$venv/bin/discord-bridge" service install || printf 'warning: the service was not installed (see above)\n' >&2
else
  printf 'note: to start the bot at login/boot and restart it on failure: discord-bridge service install\n'
fi

# --- check ------------------------------------------------------------------------------
say "checking the set-up (discord-bridge doctor)"
status=0
"$venv/bin/discord-bridge" doctor || status=$?
echo
case "$status" in
  0) say "discord-bridge is installed and set up. Start it: discord-bridge run" ;;
  3|4) say "discord-bridge is installed."
     [ "$status" = 4 ] && printf '    first: the to-do list above, before discord-bridge try\n'
     printf '    next: discord-bridge try [PROJECT_DIR]   (a local Discord in your browser, before any bot)\n'
     printf '    then: the to-do list above, for discord-bridge run\n' ;;
  *) say "discord-bridge is installed, but a check failed: fix it as shown above, then run: discord-bridge doctor" ;;
esac
printf '    after upgrading Claude Code or the bridge: discord-bridge selftest (offline, about 15 s)\n'
