#!/usr/bin/env bash
# The test command: sets up what the suite needs on a fresh machine, then runs pytest.
#   - a virtualenv in .venv with the package (editable), its test extras and the test packages
#     in packages/ (editable)
#   - tmux and espeak-ng (apt-get, when missing and run as root)
#   - Chromium for the browser test of `discord-bridge try` (Debian's chromium package, driven
#     by the playwright package from the test extras; no browser download), with a colour
#     emoji font so its screenshots show what a user sees (apt-get too)
#   - the Claude Code CLI versions the bridge is tested with, from the npm registry (not
#     global), each in .cache/claude-code-<version>. The versions are defined once, in
#     bridge/claude/versions.py (PINNED, OLDEST); tests marked claude_versions run on both (ids [claude-<version>]).
#   - the OpenAI Codex CLI versions tested the same way (npm @openai/codex), each in
#     .cache/codex-<version>; defined once in bridge/codex/versions.py (PINNED, OLDEST).
#   - Claude Code's published hook contract: the Agent SDK released with the pinned CLI and a
#     JSON Schema generator (npm), in .cache/claude-agent-sdk-<version> and
#     .cache/ts-json-schema-generator-<version>; the tests check hook JSON against it.
#   - --claude-version VERSION runs the claude_versions-marked tests on that version only
#     (installed like the others); --claude-version latest asks the npm registry which
#     version is the newest today and runs just those tests on it (unless -m is given).
# Extra arguments go to pytest, e.g. ./scripts/test.sh -k relay -x (-n 0: serially)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
# The test packages of this repository (packages/*: the Discord emulator, the fake Anthropic and
# OpenAI APIs, the e2e rig) are installed with the package, in one pip run; the stamp covers every
# pyproject.toml, so changing any of them reinstalls.
editables=(-e '.[test]')
for package in packages/*/; do editables+=(-e "$package"); done
stamp=.venv/.installed-$(cat pyproject.toml packages/*/pyproject.toml | sha1sum | cut -c1-12)
if [ ! -e "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # compat mode: a plain path entry, no import hook that every hook process would pay for
  .venv/bin/python -m pip install --quiet --config-settings editable_mode=compat "${editables[@]}"
  touch "$stamp"
fi

# tmux runs the sessions; espeak-ng speaks the voice-message tests' audio; chromium (with an
# emoji font for its screenshots) shows the page of `discord-bridge try` to the browser test.
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || missing+=(fonts-noto-color-emoji)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "${missing[*]} required: install (apt-get install ${missing[*]})" >&2; exit 1
  fi
fi

# "PINNED OLDEST" from bridge/claude/versions.py (a plain module: no import of the package)
read -r pinned oldest < <(.venv/bin/python -c '
import runpy
v = runpy.run_path("bridge/claude/versions.py")
print(v["PINNED"], v["OLDEST"])')
[ -n "${oldest:-}" ] || { echo "cannot read the tested versions from bridge/claude/versions.py" >&2; exit 1; }
# --claude-version latest: the version the npm registry calls latest today (said, then used
# like any other); other --claude-version values are installed too.
args=() requested=() marker=no
while [ $# -gt 0 ]; do
  arg="$1"; shift
  case "$arg" in
    --claude-version=*) value="${arg#*=}" ;;
    --claude-version) value="${1:-}"; shift || true ;;
    -m|-m*) marker=yes; args+=("$arg"); continue ;;
    *) args+=("$arg"); continue ;;
  esac
  if [ "$value" = latest ]; then
    command -v npm >/dev/null 2>&1 || { echo "--claude-version latest: npm is required to ask the registry" >&2; exit 2; }
    if ! value="$(npm view @anthropic-ai/claude-code dist-tags.latest --fetch-retries=0 --fetch-timeout=20000 2>/dev/null)" ||
       ! [[ "$value" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
      echo "--claude-version latest: the npm registry did not answer (no network?), so the newest Claude Code is unknown; run without it, or name a version that is installed" >&2
      exit 2
    fi
    echo "Claude Code latest (npm registry, today): $value; tested range $oldest to $pinned" >&2
    [ "$marker" = yes ] || { args+=(-m claude_versions); marker=yes; }
  fi
  requested+=("$value")
  args+=(--claude-version "$value")
done
set -- "${args[@]+"${args[@]}"}"

for version in "$pinned" "$oldest" "${requested[@]+"${requested[@]}"}"; do
  prefix=".cache/claude-code-$version"
  if ! "$prefix/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$version "; then
    command -v npm >/dev/null 2>&1 || { echo "npm is required to fetch the Claude Code CLI" >&2; exit 1; }
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" \
      "@anthropic-ai/claude-code@$version" >/dev/null
  fi
done

# The Codex CLI, the same way: "PINNED OLDEST" from bridge/codex/versions.py, each version in its
# own prefix, installed only when that prefix does not answer `codex --version` with it (so an
# offline run with the versions in place goes on; without them, npm's failure stops it).
read -r codex_pinned codex_oldest < <(.venv/bin/python -c '
import runpy
v = runpy.run_path("bridge/codex/versions.py")
print(v["PINNED"], v["OLDEST"])')
[ -n "${codex_oldest:-}" ] || { echo "cannot read the tested versions from bridge/codex/versions.py" >&2; exit 1; }
for version in "$codex_pinned" "$codex_oldest"; do
  prefix=".cache/codex-$version"
  if ! "$prefix/node_modules/.bin/codex" --version 2>/dev/null | grep -qx "codex-cli $version"; then
    command -v npm >/dev/null 2>&1 || { echo "npm is required to fetch the Codex CLI" >&2; exit 1; }
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "@openai/codex@$version" >/dev/null
  fi
done

# Claude Code's hook contract: the Agent SDK released with the pinned CLI (its TypeScript types
# of every hook's input and output) and the generator that turns them into JSON Schema for the
# tests. Which and where: packages/bridge-testkit/bridge_testkit/hook_contract.py. A prefix per
# version, as for the CLI; only the types are read, so neither the SDK's platform binaries
# (optional) nor its peers are installed. An SDK that npm does not have does not stop the run:
# the tests that need it fail saying so.
read -r sdk sdk_prefix generator generator_prefix < <(.venv/bin/python -c '
import runpy
c = runpy.run_path("packages/bridge-testkit/bridge_testkit/hook_contract.py")
sdk = c["versions"].agent_sdk_version()
print(c["SDK_PACKAGE"] + "@" + sdk, c["sdk_dir"](sdk),
      c["GENERATOR"] + "@" + c["GENERATOR_VERSION"], c["generator_dir"]())')
[ -n "${generator_prefix:-}" ] || { echo "cannot read the hook contract's packages" >&2; exit 1; }
if [ ! -e "$sdk_prefix/node_modules/${sdk%@*}/sdk.d.ts" ]; then
  mkdir -p "$sdk_prefix"
  npm install --silent --no-audit --no-fund --omit=optional --omit=peer --prefix "$sdk_prefix" \
    "$sdk" >/dev/null || echo "could not install $sdk, the hook types of Claude Code $pinned" \
    "(npm view ${sdk%@*} versions): the hook contract tests will fail" >&2
fi
if [ ! -x "$generator_prefix/node_modules/.bin/${generator%@*}" ]; then
  mkdir -p "$generator_prefix"
  npm install --silent --no-audit --no-fund --prefix "$generator_prefix" "$generator" >/dev/null
fi

# Three pytest-xdist workers on two cores: most of an end-to-end test is waiting (on the Claude
# Code CLI, tmux, the emulator), so a third worker still pays (README, "Running the tests").
# --dist loadgroup keeps tests marked with one xdist_group in one worker. A later -n wins:
# ./scripts/test.sh -n 0 runs serially (as --pdb needs).
exec .venv/bin/python -m pytest -n 3 --dist loadgroup "$@"
