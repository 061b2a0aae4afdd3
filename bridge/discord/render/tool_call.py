"""What a permission prompt shows of a tool call: what Claude Code's terminal dialog shows.

Measured on 2.1.332 (issue 20): an Edit's dialog is "Edit file", the file's name and a diff
with the file's line numbers and three lines of context; a Write is "Create file" with the
whole content, numbered, or "Overwrite file" with a diff against what is on disk; a Bash
command is "Bash command", its description, then the command in full. Here the same, in
Markdown: a ```` ```diff ```` block whose lines start with ``-``/``+`` (Discord colours them)
then the line number, the start of a new file, the command. What does not fit a message
(~1,200 characters of it) is cut at a whole line, saying how much more there is, and the
whole is attached: the change as ``<file>.diff``, a new file as itself, a command as
``command.sh``.

Line numbers need the file as it is now: the PermissionRequest hook reads it (only inside the
project: ``handlers/permission.py``) and passes it as :class:`OnDisk`. Without it (outside the
project, too big, not text) an edit shows the strings it replaces, unnumbered, as before.

Everything shown (and attached: the owner reads it too) goes through ``render/visible.py``
first: a bidi override, a zero-width space or a look-alike letter in a command, a path, a
diff or a file is shown as ``⟦U+202E⟧``, so what the owner allows is what runs.

Pure functions: no file is read here.
"""

from __future__ import annotations

import difflib
import json
import os

from bridge.discord.render.visible import escape, reveal

Files = list[tuple[str, bytes]]

CONTEXT = 3  # lines around a change, as the terminal's diff
BLOCK = 1200  # characters of a code block: with its heading and note, within 1,700
PATH_SHOWN = 200
FENCE_MOST = 10  # backticks in a row a code block's fence outgrows; more are shown as ˋ
ATTACH_MOST = 8 * 1024 * 1024  # Discord takes 10 MB a message; more is said, not attached
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
LANGUAGES = {  # a new file's code block, by extension
    "py": "python",
    "js": "js",
    "mjs": "js",
    "ts": "ts",
    "tsx": "tsx",
    "jsx": "jsx",
    "sh": "sh",
    "bash": "sh",
    "json": "json",
    "md": "md",
    "yml": "yaml",
    "yaml": "yaml",
    "toml": "toml",
    "rs": "rust",
    "go": "go",
    "html": "html",
    "css": "css",
    "java": "java",
    "c": "c",
    "h": "c",
    "cpp": "cpp",
    "rb": "ruby",
    "sql": "sql",
    "kt": "kotlin",
}


class OnDisk:
    """The file a tool call writes, as the hook found it: ``text`` (None: not read), and
    ``absent`` (it does not exist yet)."""

    __slots__ = ("absent", "text")

    def __init__(self, text: str | None = None, absent: bool = False) -> None:
        self.text, self.absent = text, absent


UNREAD = OnDisk()


def describe(
    tool: str, tool_input: dict, on_disk: OnDisk = UNREAD, home: str = ""
) -> tuple[str, Files]:
    """What will happen, in Markdown (at most ~1,550 characters), and the files to attach."""
    path = tool_input.get("file_path")
    if tool == "Bash" and isinstance(tool_input.get("command"), str):
        return _bash(tool_input["command"], tool_input.get("description"))
    if tool in ("Edit", "MultiEdit") and isinstance(path, str) and path:
        return _edit(path, _edits(tool_input), on_disk, home)
    if tool == "Write" and isinstance(path, str) and path:
        return _write(path, str(tool_input.get("content") or ""), on_disk, home)
    text = reveal(json.dumps(tool_input, indent=1, ensure_ascii=False), code=True)
    return code_block(text, "json", 1400), []


# --- Bash -----------------------------------------------------------------------------------


def _bash(command: str, description: object) -> tuple[str, Files]:
    # The model writes the description: plain text, so it cannot dress itself up as the
    # bridge's own words (a heading, a masked link, a mention) above the command.
    described = one_line(reveal(str(description or "")))
    said = f"> {escape(described[:200])}\n" if described else ""
    command = reveal(command, code=True)
    shown, more = fit_lines(command.splitlines() or [""], BLOCK)
    body, files = _cut(shown, more, "sh", "command.sh", command.encode())
    return said + body, files


# --- Edit, MultiEdit ------------------------------------------------------------------------


def _edits(tool_input: dict) -> list[dict]:
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        return [e for e in edits if isinstance(e, dict)]
    return [tool_input]


def _edit(path: str, edits: list[dict], on_disk: OnDisk, home: str) -> tuple[str, Files]:
    head = f"**Edit file** `{shown_path(path, home)}`\n"
    before = on_disk.text
    after = applied(before, edits) if before is not None else None
    if before is not None and after is not None:
        diff, files = _diff(path, before, after)
        return head + diff, files
    lines: list[str] = []
    for n, edit in enumerate(edits):
        old = reveal(str(edit.get("old_string") or ""), code=True).splitlines()
        new = reveal(str(edit.get("new_string") or ""), code=True).splitlines()
        hunks = difflib.unified_diff(old, new, lineterm="", n=1)
        part = [line for line in hunks if not line.startswith(("---", "+++", "@@"))]
        lines.extend((["⋯"] if n and part and lines else []) + part)
    if not lines:
        return head + code_block("(no textual change)", "diff"), []
    shown, more = fit_lines(lines, BLOCK)
    whole = "\n".join(lines) + "\n"
    body, files = _cut(shown, more, "diff", _name(path, ".diff"), whole.encode())
    return head + body, files


def applied(text: str, edits: list[dict]) -> str | None:
    """``text`` with the edits made as Claude Code makes them (the first occurrence, or every
    one with ``replace_all``), or None if one of them does not apply."""
    for edit in edits:
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def _diff(path: str, before: str, after: str) -> tuple[str, Files]:
    """The change as the terminal shows it: numbered lines, three of context, ``⋯`` between
    hunks; the unified diff attached when it does not fit. Both sides revealed first, so a
    U+2028 inside a line is shown, not taken for a line break."""
    old, new = reveal(before, code=True).splitlines(), reveal(after, code=True).splitlines()
    unified = list(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", lineterm="", n=CONTEXT))
    if not unified:
        return code_block("(no textual change)", "diff"), []
    lines = numbered_diff(unified)
    shown, more = fit_lines(lines, BLOCK)
    whole = ("\n".join(unified) + "\n").encode()
    return _cut(shown, more, "diff", _name(path, ".diff"), whole)


def numbered_diff(unified: list[str]) -> list[str]:
    """A unified diff's lines as ``-  42 old`` / ``+  42 new`` / ``   41 same`` (the old
    line's number for a removal, the new one's otherwise), ``⋯`` between hunks."""
    out: list[str] = []
    old_n = new_n = 0
    for line in unified:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            old_n, new_n = _hunk_starts(line)
            if out:
                out.append("⋯")
            continue
        sign, text = line[:1], line[1:]
        if sign == "-":
            out.append(f"-{old_n:>4} {text}")
            old_n += 1
        elif sign == "+":
            out.append(f"+{new_n:>4} {text}")
            new_n += 1
        else:
            out.append(f" {new_n:>4} {text}")
            old_n, new_n = old_n + 1, new_n + 1
    return out


def _hunk_starts(header: str) -> tuple[int, int]:
    """``@@ -39,5 +39,6 @@`` → (39, 39)."""
    parts = header.split()
    old, new = parts[1][1:].split(",")[0], parts[2][1:].split(",")[0]
    return max(int(old), 1), max(int(new), 1)


# --- Write ----------------------------------------------------------------------------------


def _write(path: str, content: str, on_disk: OnDisk, home: str) -> tuple[str, Files]:
    shown = shown_path(path, home)
    if on_disk.text is not None and not on_disk.absent:
        diff, files = _diff(path, on_disk.text, content)
        return f"**Overwrite file** `{shown}`\n" + diff, files
    content = reveal(content, code=True)
    lines = content.splitlines()
    verb = "Create file" if on_disk.absent else "Write"  # unread: it may exist
    head = f"**{verb}** `{shown}` ({_lines(len(lines))})\n"
    fitted, more = fit_lines(lines, BLOCK)
    language = LANGUAGES.get(path.rsplit(".", 1)[-1].lower(), "") if "." in path else ""
    body, files = _cut(fitted, more, language, _name(path, ""), content.encode())
    return head + body, files


# --- pieces ---------------------------------------------------------------------------------


def _cut(shown: list[str], more: int, language: str, name: str, whole: bytes) -> tuple[str, Files]:
    """The lines shown as a code block; when some are left out (or the one line is cut:
    ``more`` is -1), what is missing is said and the whole attached as ``name``."""
    block = code_block("\n".join(shown), language)
    if not more:
        return block, []
    missing = f"{_lines(more)} more" if more > 0 else "cut"
    if len(whole) > ATTACH_MOST:
        return block + f"\n*({missing}, too big to attach)*", []
    return block + f"\n*({missing} — the whole is attached: {name})*", [(name, whole)]


def fit_lines(lines: list[str], limit: int) -> tuple[list[str], int]:
    """The first whole lines within ``limit`` characters, and how many lines are left out;
    a first line too long for it is cut, and the count is then -1 if it was the only one."""
    shown: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit:
            if not shown:
                shown.append(line[: limit - 1] + "…")
                return shown, len(lines) - 1 or -1
            break
        shown.append(line)
        used += len(line) + 1
    return shown, len(lines) - len(shown)


def code_block(text: str, language: str, limit: int | None = None) -> str:
    """``text`` fenced so that no backticks inside end it early (cut at ``limit``)."""
    if limit is not None and len(text) > limit:
        text = text[:limit].rstrip() + f"\n… ({len(text) - limit} more characters)"
    if "`" * FENCE_MOST in text:  # no fence fits in the message: show them as look-alikes
        text = text.replace("`", "ˋ")
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def shown_path(path: str, home: str) -> str:
    """The path as the owner knows it (``~/…``), one line, no backticks, at most 200
    characters (its end kept: the file's name)."""
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")) :]
    text = one_line(reveal(path, code=True)).replace("`", "'")
    return text if len(text) <= PATH_SHOWN else "…" + text[-(PATH_SHOWN - 1) :]


def _name(path: str, suffix: str) -> str:
    """An attachment's name from the file's (letters, digits, ``._-`` only)."""
    base = os.path.basename(path.rstrip("/"))
    safe = "".join(c if c in NAME_CHARS else "_" for c in base).strip("._")[:60] or "file"
    return safe + suffix


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def one_line(text: object) -> str:
    return " ".join(str(text or "").split())
