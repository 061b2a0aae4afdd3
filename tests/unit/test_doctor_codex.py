"""``doctor``'s verdicts on Codex, for a project on ``"agent": "codex"``: a fake ``codex`` on
PATH prints a version and a ``features list``; what doctor says of each, one line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from bridge import doctor, doctor_codex
from bridge.codex import hooks_file, versions

FEATURES_ON = "hooks                                    stable             true\n"
FEATURES_OFF = "hooks                                    stable             false\n"
OLD_FEATURES = "codex_hooks                              stable             true\n"  # 0.124–0.128


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def fake_codex(tmp_path: Path, version: str, features: str = FEATURES_ON) -> str:
    """A ``codex`` script: ``--version`` prints ``version``, ``features list`` ``features``."""
    script = tmp_path / "bin" / "codex"
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then printf %s {shlex.quote(version)}; exit 0; fi\n'
        f'if [ "$1 $2" = "features list" ]; then printf %s {shlex.quote(features)}; exit 0; fi\n'
        "exit 2\n"
    )
    script.chmod(0o755)
    return str(script)


def said(capsys: pytest.CaptureFixture[str], script: str) -> tuple[doctor.Report, str]:
    report = doctor.Report()
    doctor_codex.check_codex(report, {script})
    return report, capsys.readouterr().out


TESTED = f"tested range {versions.OLDEST} to {versions.PINNED}"


@pytest.mark.parametrize(
    ("printed", "mark", "verdict"),
    [
        (f"codex-cli {versions.PINNED}\n", "✓", f"({TESTED})"),
        (f"codex-cli {versions.OLDEST}\n", "✓", f"({TESTED})"),
        ("codex-cli 9.0.0\n", "!", "is newer than the tested"),
        ("codex-cli 0.120.0\n", "!", "is older than the tested"),
    ],
)
def test_a_version_outside_the_tested_range_is_a_warning_not_a_failure(
    tmp_path, codex_home, capsys, printed, mark, verdict
) -> None:
    script = fake_codex(tmp_path, printed)
    hooks_file.install(str(codex_home / "hooks.json"))
    report, out = said(capsys, script)
    line = next(line for line in out.splitlines() if line.startswith(f"{mark} Codex: codex-cli"))
    assert verdict in line and script in line
    assert report.failures == 0, out
    assert f"✓ Codex: hooks are on ({script} features list)" in out
    assert f"✓ Codex hooks installed in {codex_home / 'hooks.json'}" in out


def test_codex_not_found_or_printing_no_version_fails_with_the_install(
    tmp_path, codex_home, capsys
) -> None:
    report, out = said(capsys, str(tmp_path / "no-such-codex"))
    assert report.failures == 2, out  # the command, and the hooks missing
    assert f"✗ Codex: `{tmp_path / 'no-such-codex'}` (codexCommand) is not installed" in out
    assert f"fix: npm install -g @openai/codex@{versions.PINNED}" in out
    report, out = said(capsys, fake_codex(tmp_path, "claude 2.1.332\n"))
    assert "not a version" in out and "is OpenAI's Codex CLI" in out


def test_hooks_switched_off_in_codexs_config_fail_with_the_command_that_enables_them(
    tmp_path, codex_home, capsys
) -> None:
    hooks_file.install(str(codex_home / "hooks.json"))
    script = fake_codex(tmp_path, f"codex-cli {versions.PINNED}\n", FEATURES_OFF)
    report, out = said(capsys, script)
    assert report.failures == 1, out
    assert "✗ Codex: hooks are off in its config" in out
    assert f"fix: {script} features enable hooks" in out
    script = fake_codex(tmp_path, "codex-cli 0.125.0\n", OLD_FEATURES)  # the older name
    assert "✓ Codex: hooks are on" in said(capsys, script)[1]
    script = fake_codex(tmp_path, f"codex-cli {versions.PINNED}\n", "")  # it does not say
    report, out = said(capsys, script)
    assert report.failures == 0 and "! Codex: `" in out and "does not say" in out


def test_the_bridges_hooks_missing_from_codexs_hooks_json_fail(
    tmp_path, codex_home, capsys
) -> None:
    script = fake_codex(tmp_path, f"codex-cli {versions.PINNED}\n")
    report, out = said(capsys, script)
    assert report.failures == 1
    assert f"✗ Codex hooks missing in {codex_home / 'hooks.json'}: " in out
    assert "Hooks need review" in out


def test_no_codex_project_no_codex_lines(capsys) -> None:
    doctor_codex.check_codex(doctor.Report(), set())
    assert capsys.readouterr().out == ""


def test_codex_hooks_installed_for_another_bridge_home_fail(
    tmp_path, codex_home, capsys, monkeypatch
) -> None:
    script = fake_codex(tmp_path, f"codex-cli {versions.PINNED}\n")
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "one"))
    hooks_file.install(str(codex_home / "hooks.json"))
    assert said(capsys, script)[0].failures == 0
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(tmp_path / "two"))
    report, out = said(capsys, script)
    assert report.failures == 1, out
    assert f"✗ the Codex hooks in {codex_home / 'hooks.json'} were installed for another" in out
    assert f"--home {tmp_path / 'one'}" in out
