"""The operator's endpoint (``metrics`` in the config): /metrics scraped after a turn, a
spooled reply and a 429, and /health going unhealthy while Discord is down."""

from __future__ import annotations

import re

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bridge_testkit import wait_until
from fake_anthropic import text

MESSAGES = "POST /channels/{channel_id}/messages"


def start_with_metrics(rig) -> str:
    raw = rig.config()
    raw["metrics"] = {"enabled": True, "port": 0}  # any free port: the log says which
    rig.write_config(raw)
    rig.start_bot()
    found = wait_until(
        lambda: re.search(r"metrics: serving (http://127\.0\.0\.1:\d+)/metrics", rig.bot_output()),
        what="the metrics endpoint",
    )
    return found[1]


def scrape(base: str) -> tuple[str, dict[tuple[str, frozenset], float]]:
    body = httpx.get(base + "/metrics", timeout=30).text
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }
    return body, samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def health(base: str) -> tuple[int, dict]:
    answer = httpx.get(base + "/health", timeout=30)
    return answer.status_code, answer.json()


def test_a_turn_is_counted_and_nothing_private_is_exposed(rig) -> None:
    rig.api.script(text("the secret reply text"))
    base = start_with_metrics(rig)
    rig.post("a private prompt")
    rig.wait_bot_message(content_contains="the secret reply text", timeout=60)

    def counted():
        body, samples = scrape(base)
        done = value(samples, "discord_bridge_turns_total", project="project-a", outcome="done")
        stop = value(samples, "discord_bridge_hook_duration_seconds_count", event="Stop")
        handed = value(samples, "discord_bridge_hook_posts_total", way="handoff")
        return (body, samples) if done == 1 and stop >= 1 and handed >= 1 else None

    body, samples = wait_until(counted, what="the turn and its Stop hook counted")
    assert value(samples, "discord_bridge_messages_relayed_total", project="project-a") == 1
    # posted from the outbox by the bot, or by the Stop hook still retrying on its own
    posted = value(samples, "discord_bridge_outbox_posted_total")
    assert posted + value(samples, "discord_bridge_hook_posts_total", way="direct") >= 1
    assert value(samples, "discord_bridge_discord_requests_total", route=MESSAGES, status="200")
    assert value(samples, "discord_bridge_sessions", project="project-a", state="idle") == 1
    assert value(samples, "discord_bridge_sessions", project="project-b", state="stopped") == 1
    assert value(samples, "discord_bridge_gateway_connects_total", server="e2e", kind="ready") == 1
    assert value(samples, "discord_bridge_outbox_entries") == 0
    assert value(samples, "discord_bridge_ready") == 1
    assert value(samples, "discord_bridge_event_loop_lag_seconds_count") > 0
    for private in (
        "secret reply",
        "private prompt",
        str(rig.projects["project-a"]),
        rig.ids["project-a"],
        rig.ids["alice"],
    ):
        assert private not in body
    healthy = {
        "healthy": True,
        "ready": True,
        "discord": True,
        "tmux": True,
        "outbox": True,
        "outboxOldestSeconds": 0.0,
    }
    assert health(base) == (200, healthy)
    rig.assert_loop_kept_up()


def test_a_reply_spooled_while_discord_is_down_and_health_follows(rig) -> None:
    rig.api.script(text("written while Discord was down"))
    base = start_with_metrics(rig)
    wait_until(lambda: health(base)[0] == 200, what="/health healthy once the bot is ready")
    rig.discord.set_outage("503")
    try:
        rig.post("do the thing")

        def spooled():
            _, samples = scrape(base)
            left = value(samples, "discord_bridge_hook_posts_total", way="spooled")
            return samples if left >= 1 else None

        samples = wait_until(spooled, timeout=90, what="the hook leaving the reply spooled")
        assert value(samples, "discord_bridge_outbox_entries") >= 1
        assert value(samples, "discord_bridge_outbox_oldest_age_seconds") > 0
        assert (
            value(samples, "discord_bridge_discord_requests_total", route=MESSAGES, status="503")
            >= 1
        )
        # Discord's answer to /health's probe is kept 5 s: unhealthy once it is asked again
        _, body = wait_until(
            lambda: (found := health(base))[0] == 503 and found,
            timeout=30,
            what="/health unhealthy",
        )
        assert (body["healthy"], body["discord"], body["ready"]) == (False, False, True)
    finally:
        rig.discord.set_outage(None)

    rig.wait_bot_message(content_contains="while Discord was down", timeout=90)
    wait_until(lambda: health(base)[0] == 200, timeout=60, what="/health healthy again")

    def posted():  # by the bot from the outbox, or by the Stop hook retrying on its own
        _, samples = scrape(base)  # (whose figure may land a moment after its post)
        direct = value(samples, "discord_bridge_hook_posts_total", way="direct")
        return samples if value(samples, "discord_bridge_outbox_posted_total") + direct else None

    samples = wait_until(posted, what="the spooled reply counted as posted")
    assert value(samples, "discord_bridge_outbox_entries") == 0


def test_a_429_is_counted_by_route(rig) -> None:
    rig.api.script(text("posted after a rate limit"))
    base = start_with_metrics(rig)
    rig.discord.force_429(MESSAGES, count=1, retry_after=0.5)
    rig.post("hello")
    rig.wait_bot_message(content_contains="posted after a rate limit", timeout=60)
    _, samples = scrape(base)
    assert value(samples, "discord_bridge_discord_rate_limited_total", route=MESSAGES) == 1
    assert (
        value(samples, "discord_bridge_discord_requests_total", route=MESSAGES, status="429") == 1
    )
