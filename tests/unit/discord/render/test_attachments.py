"""Outgoing attachments: what gets uploaded, and what the user is told when not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.discord.attachment_files import resolve_output_file
from bridge.discord.render.attachments import (
    OutputFile,
    Refused,
    extract_markers,
    format_refusals,
    plan_uploads,
    safe_upload_name,
)

MiB = 1024 * 1024


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    out = tmp_path / "outputs"
    out.mkdir(mode=0o700)
    return out


def resolve(outputs: Path, name: str, max_bytes: int = 10 * MiB) -> OutputFile | Refused:
    return resolve_output_file(str(outputs), name, max_bytes)


def reason(result: OutputFile | Refused) -> str:
    assert isinstance(result, Refused), result
    return result.reason


# --- markers -------------------------------------------------------------------------


def test_markers_are_removed_and_names_returned_in_order_once() -> None:
    text = (
        "Here is the report [DISCORD_ATTACH: report.pdf] as asked.\n\n"
        "[DISCORD_ATTACH:chart.png]\n\n"
        "Also the data:\n[DISCORD_ATTACH:   sub/data.csv  ]\n"
        "Again [DISCORD_ATTACH: report.pdf]\n"
    )
    cleaned, names = extract_markers(text)
    assert names == ["report.pdf", "chart.png", "sub/data.csv"]
    assert cleaned == "Here is the report as asked.\n\nAlso the data:\nAgain"


def test_text_without_markers_is_unchanged_apart_from_trailing_whitespace() -> None:
    text = "```python\n\n\nx = 1\n```\n\n"
    assert extract_markers(text) == ("```python\n\n\nx = 1\n```", [])


def test_empty_marker_is_removed_but_not_requested() -> None:
    assert extract_markers("a [DISCORD_ATTACH: ] b") == ("a b", [])


def test_marker_names_keep_spaces_and_unicode() -> None:
    _, names = extract_markers("[DISCORD_ATTACH: my résumé 📄.pdf]")
    assert names == ["my résumé 📄.pdf"]


# --- resolving -----------------------------------------------------------------------


def test_regular_file_is_read_with_exact_bytes(outputs: Path) -> None:
    payload = bytes(range(256)) * 10
    (outputs / "report.bin").write_bytes(payload)
    result = resolve(outputs, "report.bin")
    assert result == OutputFile("report.bin", "report.bin", payload)
    assert isinstance(result, OutputFile) and result.size == 2560


def test_file_in_subdirectory_is_allowed(outputs: Path) -> None:
    (outputs / "sub").mkdir()
    (outputs / "sub" / "report.txt").write_text("hello")
    result = resolve(outputs, "sub/report.txt")
    assert isinstance(result, OutputFile)
    assert (result.data, result.upload_name) == (b"hello", "report.txt")


def test_name_with_spaces_and_unicode(outputs: Path) -> None:
    name = "my résumé 📄.pdf"
    (outputs / name).write_bytes(b"%PDF")
    result = resolve(outputs, name)
    assert isinstance(result, OutputFile)
    assert result.data == b"%PDF"
    assert result.upload_name == "my_resume_.pdf"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", "'..' is not allowed"),
        ("sub/../../x", "'..' is not allowed"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("", "empty file name"),
        ("a\x00b", "NUL bytes are not allowed"),
        ("missing.txt", "not found in outputs"),
        ("nodir/missing.txt", "not found in outputs"),
    ],
)
def test_bad_names_are_refused(outputs: Path, name: str, expected: str) -> None:
    assert reason(resolve(outputs, name)) == expected


def test_symlink_to_outside_is_refused(outputs: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (outputs / "link.txt").symlink_to(secret)
    assert reason(resolve(outputs, "link.txt")) == "is a symlink"


def test_hard_link_to_a_file_outside_is_refused_and_the_reply_says_why(
    outputs: Path, tmp_path: Path
) -> None:
    # Regression: a hard link made inside outputs/ to a file elsewhere was uploaded.
    from bridge.handlers.reply import build_posts

    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    os.link(secret, outputs / "link.txt")
    assert "other hard links" in reason(resolve(outputs, "link.txt"))
    posts = build_posts("Here it is. [DISCORD_ATTACH: link.txt]", str(outputs), 10 * MiB)
    assert [p.files for p in posts] == [[]]
    assert posts[0].payload["content"] == (
        "Here it is.\n\n⚠️ Not attached: `link.txt` (has other hard links,"
        " so it may be a file from outside outputs)"
    )


def test_symlinked_subdirectory_is_refused(outputs: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "id_rsa").write_text("key")
    (outputs / "sub").symlink_to(elsewhere, target_is_directory=True)
    assert reason(resolve(outputs, "sub/id_rsa")) == "the path goes through a symlink"


def test_symlinked_outputs_folder_is_refused(outputs: Path, tmp_path: Path) -> None:
    (outputs / "a.txt").write_text("a")
    link = tmp_path / "outputs-link"
    link.symlink_to(outputs, target_is_directory=True)
    result = resolve_output_file(str(link), "a.txt", MiB)
    assert reason(result) == "the outputs folder is missing or not a real folder"


def test_world_writable_outputs_folder_is_refused(outputs: Path) -> None:
    (outputs / "a.txt").write_text("a")
    outputs.chmod(0o777)
    assert reason(resolve(outputs, "a.txt")) == "the outputs folder is not private"


def test_directory_is_refused(outputs: Path) -> None:
    (outputs / "folder").mkdir()
    assert reason(resolve(outputs, "folder")) == "is a folder, not a file"
    assert reason(resolve(outputs, ".")) == "not a regular file"


def test_fifo_is_refused_without_blocking(outputs: Path) -> None:
    os.mkfifo(outputs / "pipe")
    assert reason(resolve(outputs, "pipe")) == "not a regular file"


def test_device_is_refused(outputs: Path, tmp_path: Path) -> None:
    (outputs / "null").symlink_to("/dev/null")
    assert reason(resolve(outputs, "null")) == "is a symlink"


def test_too_large_file_is_refused_with_sizes(outputs: Path) -> None:
    with open(outputs / "big.bin", "wb") as f:
        f.truncate(int(12.3 * MiB))
    assert reason(resolve(outputs, "big.bin")) == "larger than the 10 MiB upload limit (12.3 MiB)"


def test_file_exactly_at_limit_is_accepted(outputs: Path) -> None:
    (outputs / "edge.bin").write_bytes(b"x" * 1000)
    assert isinstance(resolve(outputs, "edge.bin", max_bytes=1000), OutputFile)
    assert isinstance(resolve(outputs, "edge.bin", max_bytes=999), Refused)


# --- names, batching, notes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("sub/dir/report final.pdf", "report_final.pdf"),
        ("résumé.pdf", "resume.pdf"),
        ("日本語.txt", "file.txt"),
        (".env", "file.env"),
        ("...", "file"),
        ('a"b\r\nc.txt', "a_b_c.txt"),
    ],
)
def test_safe_upload_name(name: str, expected: str) -> None:
    assert safe_upload_name(name) == expected


def test_safe_upload_name_truncates_keeping_the_extension() -> None:
    name = safe_upload_name("x" * 300 + ".tar.gz")
    assert len(name) == 100
    assert name.endswith("x.tar.gz") or name.endswith(".gz")
    assert not name.startswith(".")


def _file(name: str, size: int = 1) -> OutputFile:
    return OutputFile(name, safe_upload_name(name), b"x" * size)


def test_plan_uploads_batches_ten_per_message() -> None:
    files = [_file(f"f{i}.txt") for i in range(23)]
    batches = plan_uploads(files)
    assert [len(b) for b in batches] == [10, 10, 3]
    assert [f.name for b in batches for f in b] == [f.name for f in files]


def test_plan_uploads_respects_request_size() -> None:
    files = [_file(f"f{i}.bin", size=9 * MiB) for i in range(4)]
    assert [len(b) for b in plan_uploads(files)] == [2, 2]


def test_plan_uploads_makes_upload_names_unique() -> None:
    files = [_file("a/report.txt"), _file("b/report.txt"), _file("c/REPORT.txt")]
    names = [f.upload_name for f in plan_uploads(files)[0]]
    assert names == ["report.txt", "report-2.txt", "REPORT-3.txt"]


def test_plan_uploads_of_nothing_is_empty() -> None:
    assert plan_uploads([]) == []


def test_format_refusals_escapes_backticks_and_lists_each() -> None:
    note = format_refusals(
        [
            Refused("../../etc/passwd", "'..' is not allowed"),
            Refused("a`b.txt", "not found in outputs"),
        ]
    )
    assert note.splitlines() == [
        "⚠️ Not attached: `../../etc/passwd` ('..' is not allowed)",
        "⚠️ Not attached: `aˋb.txt` (not found in outputs)",
    ]
    assert format_refusals([]) == ""


def test_format_refusals_stays_short() -> None:
    note = format_refusals([Refused("x" * 500 + "\n", "not found in outputs")] * 30)
    assert len(note.splitlines()) == 11
    assert len(note) < 1500
    assert "\n" not in note.splitlines()[0]
