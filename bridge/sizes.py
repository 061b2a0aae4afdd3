"""Byte counts as a person reads them, for every layer that names a size: the upload limit in
Claude's system prompt (``claude/launch.py``), a refused attachment or download, a reply too
long to upload. Import-free."""


def format_size(n: int) -> str:
    """Human size in binary units: ``512 bytes``, ``1.5 KiB``, ``10 MiB``."""
    if n < 1024:
        return f"{n} bytes"
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    raise AssertionError("unreachable")
