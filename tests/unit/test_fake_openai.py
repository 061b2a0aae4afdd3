"""The fake Responses API streams what Codex reads (measured on 0.171.0: docs/codex.md), takes
one scripted turn per request of the user's thread, and answers Codex's title requests aside."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from fake_openai import FakeOpenAI, exec_command, text, usage_limit


def post(fake: FakeOpenAI, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(
        f"{fake.base_url}/responses",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def events(stream: str) -> list[dict]:
    return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]


def prompt(text_value: str, source: str = "user") -> dict:
    metadata = {"x-codex-turn-metadata": json.dumps({"thread_source": source})}
    message = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text_value}],
    }
    return {"model": "gpt-fake", "stream": True, "input": [message], "client_metadata": metadata}


@pytest.fixture
def fake():
    with FakeOpenAI() as api:
        yield api


def test_a_text_turn_streams_the_events_codex_reads(fake: FakeOpenAI) -> None:
    fake.script(text("Hello there", chunks=2))
    status, body = post(fake, prompt("say hello"))
    kinds = [event["type"] for event in events(body)]
    assert status == 200
    assert kinds == [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_item.done",
        "response.completed",
    ]
    done = events(body)[-1]["response"]
    assert done["output"][0]["content"][0]["text"] == "Hello there"
    assert done["usage"]["total_tokens"] > 0
    assert fake.last_user_text(fake.requests[0]) == "say hello"


def test_a_shell_call_is_a_function_call_of_exec_command(fake: FakeOpenAI) -> None:
    fake.script(exec_command("touch x", escalate="needs to write outside"))
    item = events(post(fake, prompt("go"))[1])[-2]["item"]
    assert item["type"] == "function_call" and item["name"] == "exec_command"
    arguments = json.loads(item["arguments"])
    assert arguments == {
        "cmd": "touch x",
        "sandbox_permissions": "require_escalated",
        "justification": "needs to write outside",
    }


def test_the_usage_limit_is_a_429_codex_does_not_retry(fake: FakeOpenAI) -> None:
    fake.script(usage_limit(resets_at=1_800_000_000))
    status, body = post(fake, prompt("go"))
    assert status == 429
    assert json.loads(body)["error"] == {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "plus",
        "resets_at": 1_800_000_000,
    }


def test_a_title_request_takes_no_scripted_turn(fake: FakeOpenAI) -> None:
    fake.script(text("the answer"))
    title = events(post(fake, prompt("Generate a concise title", source="thread_title"))[1])
    answer = events(post(fake, prompt("question"))[1])
    assert title[-1]["response"]["output"][0]["content"][0]["text"] == "Fake task title"
    assert answer[-1]["response"]["output"][0]["content"][0]["text"] == "the answer"
    assert len(fake.requests) == 1 and len(fake.side_requests) == 1
