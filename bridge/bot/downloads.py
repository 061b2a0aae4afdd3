"""Discord attachments → files in ``uploads/<channel>/`` that Claude can read.

Streamed with a 30 s timeout and a size cap; names reduced to a safe form and made unique
with the message id; written to a temporary name created exclusively, then renamed, so
a half-downloaded file is never seen and nothing outside the directory can be written.
"""

from __future__ import annotations

import os

import aiofiles
import aiohttp
import discord

from bridge.discord.render.attachments import safe_upload_name
from bridge.sizes import format_size

STALL_TIMEOUT = 30  # seconds without a byte, or to connect
MIN_RATE = 256 * 1024  # bytes/s a download may not fall below on average
CHUNK = 64 * 1024


class DownloadError(Exception):
    pass


async def save_attachments(
    session: aiohttp.ClientSession,
    message: discord.Message,
    directory: str,
    max_bytes: int,
) -> tuple[list[str], list[str]]:
    """Download every attachment of ``message``; returns (saved paths, failure notes)."""
    saved, failures = [], []
    for index, attachment in enumerate(message.attachments):
        name = f"{message.id}-{index}-{safe_upload_name(attachment.filename)}"
        target = os.path.join(directory, name)
        try:
            if attachment.size > max_bytes:
                raise DownloadError(f"larger than the {format_size(max_bytes)} limit")
            await _stream(session, attachment.url, target, max_bytes)
        except (DownloadError, aiohttp.ClientError, TimeoutError, OSError) as err:
            failures.append(f"`{attachment.filename}`: {_describe(err)}")
            continue
        saved.append(target)
    return saved, failures


async def _stream(session: aiohttp.ClientSession, url: str, target: str, max_bytes: int) -> None:
    partial = target + ".part"
    # 30 s for small files; big ones get time in proportion, so a 50 MB file on a slow link
    # is not cut off, while a stalled download still ends after 30 s without data.
    total = STALL_TIMEOUT + max_bytes / MIN_RATE
    timeout = aiohttp.ClientTimeout(total=total, connect=STALL_TIMEOUT, sock_read=STALL_TIMEOUT)
    try:
        async with session.get(url, timeout=timeout) as response:
            if response.status != 200:
                raise DownloadError(f"Discord answered {response.status}")
            size = 0
            async with aiofiles.open(partial, "xb") as handle:  # 'x': never through a link
                async for chunk in response.content.iter_chunked(CHUNK):
                    size += len(chunk)
                    if size > max_bytes:
                        raise DownloadError(f"larger than the {format_size(max_bytes)} limit")
                    await handle.write(chunk)
        os.chmod(partial, 0o600)
        os.rename(partial, target)
    except BaseException:
        try:
            os.unlink(partial)
        except FileNotFoundError:
            pass
        raise


def _describe(err: BaseException) -> str:
    if isinstance(err, TimeoutError):
        return "download timed out"
    return str(err) or type(err).__name__
