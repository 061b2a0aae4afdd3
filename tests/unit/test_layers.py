"""The layers of docs/architecture.md, held by the code.

The table in docs/architecture.md is the one place that says how the code is layered: its rows
run from the top (``hooks/``, the command) to the bottom (``bridge/fastjson.py``, the version),
and each row may import only from the rows below it. These tests read that table and every
import of ``bridge/`` and ``hooks/`` (with :mod:`ast`, no module is executed) and check:

- no arrow runs back up the table, and packages that share a row do not import each other;
- no import circle among modules (the check a before-commit import-cycle tool runs too);
- only ``bridge/bot/`` imports discord.py (and aiohttp, its transport), and only the modules
  :data:`NAMED_EXCEPTIONS` names import what is kept for them (``try`` starts the emulator);
- a hook script imports only what the hook path allows (:data:`HOOK_PATH`);
- every module is named in its package's row, and every row names a package that exists.

Every import counts: at module level, inside a function (a deferred import still ties two
modules together) and under ``if TYPE_CHECKING:``. The last are held to the same order: none
points up today, and one that did would be a dependency of the design all the same (the
annotation names a type of the upper layer, so the lower one is written against it). Where a
lower layer needs to call up, it declares a Protocol (as ``bot/client.py`` does) instead.

A test at the bottom plants an upward import, a circle and a discord.py import in a copy of the
tree and sees each reported, so these checks cannot pass by reading nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = Path("docs/architecture.md")
SOURCES = ("bridge", "hooks")

# discord.py and the HTTP library it runs on: the bot's alone.
DISCORD_PY = {"discord", "aiohttp"}
# Third-party packages that only the named modules may import, and why.
NAMED_EXCEPTIONS = {
    "discord": {"bridge.bot"},
    "aiohttp": {"bridge.bot"},
    # `discord-bridge try` starts the emulator (a product dependency of `try`, not a test's);
    # `discord-bridge selftest` runs the user's Claude Code against it and the fake Messages
    # API (both installed by install.sh for that); `try --demo` runs it against both, the
    # fake API answering as the demo's scripted model
    "discord_emulator": {"bridge.tryout", "bridge.selftest", "bridge.demo"},
    # Codex's demo and selftest round run the user's Codex on the fake Responses API
    "fake_openai": {"bridge.demo", "bridge.demo_codex", "bridge.selftest", "bridge.selftest_codex"},
    "fake_anthropic": {
        "bridge.selftest",
        "bridge.selftest_bench",
        "bridge.selftest_checks",
        "bridge.demo",
        "bridge.demo_tour",
    },
    # /preview's headless Chromium (the [preview] extra), imported when a preview runs
    "playwright": {"bridge.preview"},
    # the test rig is for tests and benches: the product never imports it
    "bridge_testkit": set(),
}
# What a hook script may import: it runs on every tool call, so its own imports stay to the
# interpreter's built-ins and the hook path; everything else is the handler's business.
HOOK_PATH = ("os", "sys", "bridge.handlers")


# --- reading the code ---------------------------------------------------------------------


@dataclass(frozen=True)
class Arrow:
    """One import: ``source`` imports ``target`` at ``line`` (``target`` a module of the tree,
    or the top-level name of anything else)."""

    source: str
    target: str
    line: int
    internal: bool

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


@dataclass
class Tree:
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    arrows: list[Arrow] = field(default_factory=list)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_tree(root: Path) -> Tree:
    tree = Tree(root)
    for source in SOURCES:
        for path in sorted((root / source).rglob("*.py")):
            tree.modules[module_name(path, root)] = path
    for name, path in tree.modules.items():
        tree.arrows.extend(imports_of(name, path, set(tree.modules)))
    return tree


def imports_of(name: str, path: Path, known: set[str]) -> list[Arrow]:
    """Every import in the file, wherever it stands, resolved to the module it loads."""
    syntax = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    arrows = []
    for node in ast.walk(syntax):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, package)
            # `from pkg import mod` loads pkg.mod; `from mod import name` loads mod
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        elif is_run_hook(node):
            # a hook script names its handler's module as a string: `run_hook("bridge.…", …)`
            targets = [node.args[0].value]  # type: ignore[attr-defined]
        else:
            continue
        for target in targets:
            resolved = resolve(target, known)
            if resolved != name:
                arrows.append(Arrow(name, resolved, node.lineno, resolved in known))
    return arrows


def absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    anchor = package.split(".")
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def is_run_hook(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "run_hook"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def resolve(target: str, known: set[str]) -> str:
    """The longest known module ``target`` starts with, else its top-level name."""
    probe = target
    while probe and probe not in known:
        probe = probe.rpartition(".")[0]
    return probe or target.partition(".")[0]


# --- reading the table --------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    number: int
    packages: tuple[str, ...]  # module names: "bridge.bot", "bridge.cli", "hooks", "bridge"
    text: str  # the room column

    def names(self) -> set[str]:
        return set(re.findall(r"`([^`]+)`", self.text))


def read_layers(root: Path) -> list[Row]:
    """The rows of the table under "## Layers", top first."""
    text = (root / ARCHITECTURE).read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = []
    for number, line in enumerate(lines[2:]):
        first, room = (cell.strip() for cell in line.strip("|").split("|", 1))
        paths = re.findall(r"`([^`]+)`", first)
        rows.append(Row(number, tuple(path_to_module(p) for p in paths), room))
    return rows


def path_to_module(path: str) -> str:
    path = path.removesuffix("/").removesuffix(".py").removesuffix("/__init__")
    return path.replace("/", ".")


def row_of(module: str, rows: list[Row]) -> tuple[Row, str] | None:
    """The row and package (longest prefix) a module belongs to."""
    best: tuple[Row, str] | None = None
    for row in rows:
        for package in row.packages:
            inside = module == package or module.startswith(package + ".")
            if inside and (best is None or len(package) > len(best[1])):
                best = (row, package)
    return best


# --- the checks: each returns what is wrong, one line per problem ---------------------------


def upward_arrows(tree: Tree, rows: list[Row]) -> list[str]:
    problems = []
    for arrow in tree.arrows:
        if not arrow.internal:
            continue
        source, target = row_of(arrow.source, rows), row_of(arrow.target, rows)
        if source is None or target is None:
            continue  # unlisted_modules says so
        (source_row, source_package), (target_row, target_package) = source, target
        if source_package == target_package:
            continue
        if target_row.number < source_row.number:
            problems.append(f"{arrow}: up from row {source_row.number} to {target_row.number}")
        elif target_row.number == source_row.number:
            problems.append(f"{arrow}: {source_package} and {target_package} share a row")
    return problems


def circles(tree: Tree) -> list[str]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {name: set() for name in tree.modules}
    for arrow in tree.arrows:
        # a package's __init__ importing its own submodules is how a package presents them
        if arrow.internal and not arrow.target.startswith(arrow.source + "."):
            graph[arrow.source].add(arrow.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[str] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(" <-> ".join(sorted([v, *component])))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def kept_imports(tree: Tree) -> list[str]:
    problems = []
    for arrow in tree.arrows:
        allowed = NAMED_EXCEPTIONS.get(arrow.target)
        if allowed is None or arrow.internal:
            continue
        if not any(arrow.source == p or arrow.source.startswith(p + ".") for p in allowed):
            who = ", ".join(sorted(allowed)) or "no module of the product"
            problems.append(f"{arrow}: {arrow.target} is for {who} only")
    return problems


def hook_imports(tree: Tree) -> list[str]:
    return [
        f"{arrow}: not on the hook path ({', '.join(HOOK_PATH)})"
        for arrow in tree.arrows
        if arrow.source.partition(".")[0] == "hooks"
        and not any(arrow.target == p or arrow.target.startswith(p + ".") for p in HOOK_PATH)
    ]


def unlisted_modules(tree: Tree, rows: list[Row]) -> list[str]:
    problems = []
    for module in tree.modules:
        found = row_of(module, rows)
        if found is None:
            problems.append(f"{module}: no row of {ARCHITECTURE} holds it")
            continue
        row, package = found
        # a module inside a package row is named in that row: `runtime`, `render/`, `split`
        for part in module.removeprefix(package).strip(".").split(".") if module != package else []:
            if part not in row.names() and f"{part}/" not in row.names():
                problems.append(f"{module}: `{part}` is not named in the row of {package}")
    return problems


def stale_rows(tree: Tree, rows: list[Row]) -> list[str]:
    return [
        f"row {row.number}: {package} is not a module of the tree"
        for row in rows
        for package in row.packages
        if package not in tree.modules
    ]


# --- the tests ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree() -> Tree:
    return read_tree(ROOT)


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return read_layers(ROOT)


def test_the_table_is_read(tree: Tree, rows: list[Row]) -> None:
    assert len(rows) >= 10
    assert rows[0].packages == ("hooks",)
    assert len(tree.modules) > 90 and len(tree.arrows) > 400


def test_no_arrow_runs_up_the_table(tree: Tree, rows: list[Row]) -> None:
    assert upward_arrows(tree, rows) == []


def test_no_import_circle(tree: Tree) -> None:
    assert circles(tree) == []


def test_only_the_bot_imports_discord_py(tree: Tree) -> None:
    assert {a.source.split(".")[1] for a in tree.arrows if a.target in DISCORD_PY} == {"bot"}
    assert kept_imports(tree) == []


def test_hook_scripts_import_only_the_hook_path(tree: Tree) -> None:
    assert hook_imports(tree) == []


def test_every_module_is_in_the_table(tree: Tree, rows: list[Row]) -> None:
    assert unlisted_modules(tree, rows) == []
    assert stale_rows(tree, rows) == []


# --- the checks see what they are for ---------------------------------------------------------
# Each plants one wrong import in a copy of a module (the rest of the tree as it is) and sees the
# check report it, and only it: what the tree already has wrong is the tests above' business.


def planted(tree: Tree, module: str, line: str, tmp_path: Path) -> Tree:
    """The tree with ``line`` added to ``module``, inside a function at its end."""
    copy = tmp_path / tree.modules[module].name
    source = tree.modules[module].read_text(encoding="utf-8")
    copy.write_text(f"{source}\n\ndef planted():\n    {line}\n", encoding="utf-8")
    modules = {**tree.modules, module: copy}
    kept = [arrow for arrow in tree.arrows if arrow.source != module]
    return Tree(tree.root, modules, kept + imports_of(module, copy, set(modules)))


def new(problems_before: list[str], problems_after: list[str]) -> list[str]:
    return [problem for problem in problems_after if problem not in problems_before]


def test_a_planted_upward_import_is_reported(tree: Tree, rows: list[Row], tmp_path: Path) -> None:
    wrong = planted(tree, "bridge.state.decisions", "from bridge.sessions import manager", tmp_path)
    (problem,) = new(upward_arrows(tree, rows), upward_arrows(wrong, rows))
    assert problem.startswith("bridge.state.decisions -> bridge.sessions.manager (line ")
    number = {package: row.number for row in rows for package in row.packages}
    assert problem.endswith(
        f": up from row {number['bridge.state']} to {number['bridge.sessions']}"
    )


def test_a_planted_circle_is_reported(tree: Tree, tmp_path: Path) -> None:
    wrong = planted(tree, "bridge.fastjson", "import bridge.state.runtime", tmp_path)
    (circle,) = new(circles(tree), circles(wrong))
    assert "bridge.fastjson" in circle.split(" <-> ")
    assert "bridge.state.runtime" in circle.split(" <-> ")


def test_discord_py_outside_the_bot_is_reported(tree: Tree, tmp_path: Path) -> None:
    wrong = planted(tree, "bridge.handlers.reply", "import discord.http", tmp_path)
    (problem,) = new(kept_imports(tree), kept_imports(wrong))
    assert problem.startswith("bridge.handlers.reply -> discord (line ")
    assert problem.endswith(": discord is for bridge.bot only")


def test_the_emulator_outside_try_and_selftest_is_reported(tree: Tree, tmp_path: Path) -> None:
    wrong = planted(tree, "bridge.cli", "from discord_emulator import server", tmp_path)
    (problem,) = new(kept_imports(tree), kept_imports(wrong))
    shown = "bridge.demo, bridge.selftest, bridge.tryout only"
    assert problem.endswith(f": discord_emulator is for {shown}")


def test_a_heavy_import_in_a_hook_script_is_reported(tree: Tree, tmp_path: Path) -> None:
    wrong = planted(tree, "hooks.stop", "from bridge.discord import rest", tmp_path)
    (problem,) = new(hook_imports(tree), hook_imports(wrong))
    assert problem.startswith("hooks.stop -> bridge.discord.rest (line ")


def test_a_module_missing_from_the_table_is_reported(tree: Tree, rows: list[Row]) -> None:
    wrong = Tree(tree.root, {**tree.modules, "bridge.state.ledger": Path("ledger.py")}, tree.arrows)
    assert new(unlisted_modules(tree, rows), unlisted_modules(wrong, rows)) == [
        "bridge.state.ledger: `ledger` is not named in the row of bridge.state"
    ]
