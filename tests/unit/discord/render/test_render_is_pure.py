"""``bridge/discord/render/`` is pure, as docs/architecture.md says: text and payloads from the
values it is given, no file opened or read. Its modules' own code is read with :mod:`ast` (no
module is executed): none imports a file-system module or calls ``open``, and of ``os`` only
``os.path`` (names, not files) is used. What reads a file lives outside, as
``discord/attachment_files.py`` does for a marker's file."""

from __future__ import annotations

import ast
from pathlib import Path

RENDER = Path(__file__).resolve().parents[4] / "bridge" / "discord" / "render"
FILE_MODULES = {"io", "pathlib", "stat", "errno", "shutil", "tempfile", "glob", "fcntl", "mmap"}


def file_access(source: str, name: str) -> list[str]:
    """Where ``source`` imports a file-system module, calls ``open`` or uses ``os`` beyond
    ``os.path``: one line per place."""
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            if node.module == "os":
                modules += [f"os.{alias.name}" for alias in node.names if alias.name != "path"]
        else:
            modules = []
        found += [
            f"{name}:{node.lineno} imports {m}" for m in modules if m.split(".")[0] in FILE_MODULES
        ]
        found += [f"{name}:{node.lineno} imports {m}" for m in modules if m.startswith("os.")]
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
            found.append(f"{name}:{node.lineno} calls open")
        if (
            isinstance(node, ast.Attribute)
            and getattr(node.value, "id", None) == "os"
            and node.attr != "path"
        ):
            found.append(f"{name}:{node.lineno} uses os.{node.attr}")
    return found


def test_no_render_module_opens_or_reads_a_file() -> None:
    modules = sorted(RENDER.glob("*.py"))
    assert len(modules) > 5  # the package was found
    found = [p for path in modules for p in file_access(path.read_text(), path.name)]
    assert found == []


def test_a_planted_file_read_is_reported() -> None:
    planted = (
        "import os\nimport stat\nfrom pathlib import Path\nfrom os import fstat\n"
        "def f(p):\n    os.path.basename(p)\n    fd = os.open(p, 0)\n    return open(p).read()\n"
    )
    assert file_access(planted, "x.py") == [
        "x.py:2 imports stat",
        "x.py:3 imports pathlib",
        "x.py:4 imports os.fstat",
        "x.py:7 uses os.open",
        "x.py:8 calls open",
    ]
