"""What ``pip install .`` puts into site-packages: exactly one top-level package, ``bridge``,
with the hook scripts inside it as ``bridge.hooks``; and the hooks run from there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_package_list_names_every_package_of_the_source_tree() -> None:
    """pyproject.toml lists the packages (``packages.find`` cannot map hooks/ into bridge/):
    a new package folder must be listed, or the install would silently lack it."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    inits = (REPO / "bridge").rglob("__init__.py")
    folders = {".".join(init.parent.relative_to(REPO).parts) for init in inits}
    listed = set(setuptools["packages"])
    assert listed == folders | {"bridge.hooks"}


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip install .`` would install, built from this checkout and unpacked into a
    folder that stands for site-packages."""
    # A copy of what the wheel is built from: setuptools writes build/ and *.egg-info into the
    # tree it builds, and two test workers building this checkout at once trip over each other.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    caches = shutil.ignore_patterns("__pycache__")
    for folder in ("bridge", "hooks"):
        shutil.copytree(REPO / folder, source / folder, ignore=caches)
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        cwd=out,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("discord_bridge-*.whl")
    site = tmp_path_factory.mktemp("site-packages")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def test_an_install_adds_only_bridge_at_the_top_level(unpacked: Path) -> None:
    top = {path.name for path in unpacked.iterdir() if not path.name.endswith(".dist-info")}
    assert top == {"bridge"}
    assert (unpacked / "bridge" / "hooks" / "stop.py").is_file()
    (info,) = unpacked.glob("*.dist-info")
    assert (info / "top_level.txt").read_text().split() == ["bridge"]


def test_installed_hooks_are_found_and_import_the_installed_bridge(unpacked: Path) -> None:
    """``hooks install`` from an install points at bridge/hooks/, and a hook script run from
    there (``python -I -S``, as Claude Code runs it) imports the bridge beside it, not this
    checkout's."""
    where = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from bridge.claude import settings; print(settings.script_path('stop.py'))",
            str(unpacked),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip() == str(unpacked / "bridge" / "hooks" / "stop.py")
    ran = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-v",
            str(unpacked / "bridge" / "hooks" / "stop.py"),
            "--home",
            str(unpacked / "no-home"),
        ],
        input="{}",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode == 0
    loaded = [line for line in ran.stderr.splitlines() if "bridge/handlers/__init__.py" in line]
    assert loaded and all(str(unpacked) in line for line in loaded), ran.stderr[-2000:]
