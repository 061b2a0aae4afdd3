"""The Stop hook's job: turn Claude's final reply into Discord messages and deliver them.

Reply text comes from the event's ``last_assistant_message`` (or the transcript), attachment
markers become uploads from the session's ``outputs/`` directory, the text is split into
≤ 2000-character messages with balanced code fences, and everything is delivered in order,
spooling to the outbox whatever Discord does not take now.
"""

from __future__ import annotations

from bridge import fastjson, runtime
from bridge.hookkit import HookContext

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.outbox import Outbox
    from bridge.rest import Post

NO_MENTIONS = {"parse": []}  # model output must never ping @everyone, roles or users


def on_stop(context: HookContext) -> None:
    text = reply_text(context.event)
    if not text.strip():
        return
    rt = context.runtime.ensure()
    outputs = rt.channel_dir("outputs", context.channel_id)
    posts = build_posts(text, outputs, context.cfg.upload_limit)
    deliver(context, posts)


def reply_text(event: dict) -> str:
    """``last_assistant_message``, or the newest assistant message in the transcript."""
    text = event.get("last_assistant_message")
    if isinstance(text, str) and text.strip():
        return text
    path = event.get("transcript_path")
    return last_assistant_text(path) if isinstance(path, str) else ""


def last_assistant_text(transcript_path: str) -> str:
    """Texts of the newest main-thread assistant message (blocks share ``message.id``)."""
    try:
        with open(transcript_path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    current_id, texts = None, []
    for line in lines:
        try:
            record = fastjson.loads(line)
        except ValueError:
            continue  # the last line may still be being written
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        if record.get("isSidechain"):
            continue
        message = record.get("message") or {}
        if message.get("id") != current_id:
            current_id, texts = message.get("id"), []
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(block.get("text", ""))
    return "\n".join(texts)


def build_posts(text: str, outputs_dir: str, upload_limit: int) -> list[Post]:
    """Messages for one reply: text chunks first, files attached from the last chunk on."""
    from bridge.render.attachments import (
        Refused,
        extract_markers,
        format_refusals,
        plan_uploads,
        resolve_output_file,
    )
    from bridge.render.split import split_message
    from bridge.rest import Post

    body, names = extract_markers(text)
    files, refused = [], []
    for name in names:
        result = resolve_output_file(outputs_dir, name, upload_limit)
        (refused if isinstance(result, Refused) else files).append(result)
    if refused:
        body = f"{body}\n\n{format_refusals(refused)}".strip()
    posts = [Post(message_payload(chunk)) for chunk in split_message(body)]
    for i, batch in enumerate(plan_uploads(files)):
        uploads = [(f.upload_name, f.data) for f in batch]
        if i == 0 and posts:
            posts[-1].files = uploads
        else:
            posts.append(Post(message_payload(""), uploads))
    return posts


def message_payload(content: str) -> dict:
    from bridge.rest import new_nonce

    payload = {"allowed_mentions": NO_MENTIONS, "nonce": new_nonce(), "enforce_nonce": True}
    if content:
        payload["content"] = content
    return payload


def deliver(context: HookContext, posts: list[Post]) -> None:
    """Post in order after anything already waiting in the outbox; spool what fails."""
    from bridge.outbox import Outbox
    from bridge.rest import DeliveryError

    outbox = Outbox(context.runtime.outbox)
    channel = context.channel_id
    with outbox.locked(channel), context.rest() as rest:

        def send(_entry: dict, post: Post) -> None:
            rest.create_message(channel, post)

        if outbox.pending(channel) and not outbox.drain(channel, send):
            _spool(outbox, context, posts)
            return
        for i, post in enumerate(posts):
            try:
                rest.create_message(channel, post)
            except DeliveryError as err:
                if err.retryable:
                    _spool(outbox, context, posts[i:])
                    return
                log(context, f"Discord refused a reply chunk for #{channel}: {err}")


def _spool(outbox: Outbox, context: HookContext, posts: list[Post]) -> None:
    for post in posts:
        outbox.enqueue(context.channel_id, context.server.name, post)
    log(context, f"Discord unreachable: {len(posts)} message(s) for #{context.channel_id} queued")


def log(context: HookContext, line: str) -> None:
    runtime.append_log(context.runtime.hook_log, line)
