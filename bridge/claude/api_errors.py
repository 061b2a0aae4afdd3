"""What to do about each error that ends a Claude Code turn (the StopFailure hook's ``error``).

The hook's ``error`` is one of the list the Agent SDK's hook types give (``StopFailure``'s
``error`` union in ``sdk.d.ts``, which ``bridge_testkit.hook_contract`` checks hook JSON
against); ``last_assistant_message`` holds the CLI's own line,
e.g. "Not logged in · Please run /login" (2.1.332, no API key and no login: at once, no request
made) or "API Error: Connection refused …" (the service unreachable: after ~3 min of retries).
The CLI says what happened; this says what the owner, reading on a phone, can do about it.
"""

from __future__ import annotations

RESEND = "then send your message again"

ADVICE = {
    "authentication_failed": (
        "Claude Code on this machine is not logged in, or its login expired: run `claude` "
        "in a terminal as the bot's user and `/login` there (or give the bot's environment "
        f"ANTHROPIC_API_KEY), {RESEND}."
    ),
    "oauth_org_not_allowed": (
        "this login's organization may not use Claude Code: `/login` with another account "
        f"in a terminal on this machine, {RESEND}."
    ),
    "account_on_hold": (
        f"the Anthropic account is on hold: see console.anthropic.com or claude.ai, {RESEND}."
    ),
    "verification_required": (
        "the Anthropic account needs verifying: open claude.ai or console.anthropic.com in a "
        f"browser and follow its steps, {RESEND}."
    ),
    "billing_error": (
        "a billing problem (credit balance, payment, plan): fix it at console.anthropic.com "
        f"→ Billing (or your claude.ai plan), {RESEND}."
    ),
    "rate_limit": (
        "a rate or usage limit: wait until it resets (Claude Code says when), then send "
        "your message again; a subscriber's session continues by itself at the reset."
    ),
    "overloaded": f"Anthropic's service is overloaded right now: wait a minute, {RESEND}.",
    "invalid_request": (
        "the API refused the request: often a conversation grown too long or an attachment "
        "it cannot read. `/compact` shortens the conversation, `/new` starts afresh."
    ),
    "model_not_found": (
        f"this account cannot use the session's model: pick another with `/model`, {RESEND}."
    ),
    "server_error": (
        "the API failed, or could not be reached after Claude Code's retries: check the "
        f"network of the machine the bot runs on (DNS, firewall, proxy), {RESEND}."
    ),
    "max_output_tokens": "the reply hit the output limit: ask Claude to continue.",
    "cloud_credential_error": (
        "the cloud credentials Claude Code uses (Bedrock, Vertex) failed: refresh them on the "
        f"bot's machine, {RESEND}."
    ),
}
FALLBACK = (
    "Claude Code ended the turn with an error: `/peek` shows its screen, "
    "`discord-bridge selftest` checks Claude Code with the bridge."
)
LINE_LIMIT = 300  # characters of the CLI's own line


def notice(error: str, said: str, details: str = "") -> str:
    """The channel's message for a turn an API error ended: the CLI's own line (``said``,
    its ``last_assistant_message``; else the error's name and ``details``), and what to do."""
    said = " ".join(said.split())[:LINE_LIMIT]
    details = " ".join(details.split())[:LINE_LIMIT]
    what = said or f"an API error ({error}{': ' + details if details else ''})"
    advice = ADVICE.get(error, FALLBACK)
    return f"⚠️ Claude Code stopped: {_plain(what)}\n**What to do:** {advice}"


def _plain(text: str) -> str:
    """The CLI's words as text: no code span, link or mention of anyone can be made of it."""
    return text.replace("`", "'").replace("@", "@\u200b")
