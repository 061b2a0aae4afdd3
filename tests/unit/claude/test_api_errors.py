"""Each error that can end a turn (StopFailure) reaches Discord as Claude Code's own line and
what to do about it."""

from __future__ import annotations

from bridge.claude import api_errors

# StopFailure's `error` values as the Agent SDK's hook types list them (0.3.332, sdk.d.ts).
SDK_ERRORS = (
    "authentication_failed",
    "oauth_org_not_allowed",
    "account_on_hold",
    "verification_required",
    "billing_error",
    "rate_limit",
    "overloaded",
    "invalid_request",
    "model_not_found",
    "server_error",
    "unknown",
    "max_output_tokens",
    "cloud_credential_error",
)


def test_every_error_the_cli_can_report_has_its_own_advice_or_the_general_one() -> None:
    assert set(api_errors.ADVICE) == set(SDK_ERRORS) - {"unknown"}
    assert len(set(api_errors.ADVICE.values())) == len(api_errors.ADVICE)  # none copied
    assert "selftest" in api_errors.notice("unknown", "")


def test_not_logged_in_in_the_clis_words_with_what_to_do() -> None:
    text = api_errors.notice("authentication_failed", "Not logged in · Please run /login")
    assert text == (
        "⚠️ Claude Code stopped: Not logged in · Please run /login\n**What to do:** "
        + api_errors.ADVICE["authentication_failed"]
    )
    assert "/login" in text and "ANTHROPIC_API_KEY" in text


def test_without_the_clis_line_the_error_and_its_details_are_named() -> None:
    text = api_errors.notice("server_error", "", "ECONNREFUSED\n 127.0.0.1:9")
    assert text.startswith("⚠️ Claude Code stopped: an API error (server_error: ECONNREFUSED 127")
    assert "check the network" in text


def test_the_clis_line_cannot_make_code_links_or_mentions_and_is_kept_short() -> None:
    text = api_errors.notice("overloaded", "`x` @everyone " + "y" * 1000)
    first = text.splitlines()[0]
    assert "`" not in first and "@everyone" not in first
    assert len(first) < 340
