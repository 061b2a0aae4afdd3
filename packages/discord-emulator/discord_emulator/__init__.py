"""A local Discord emulator (REST v10 + gateway + /_test control API) for end-to-end tests.

Usage::

    from discord_emulator import Emulator

    with Emulator() as emu:                     # seeded, deterministic ids
        discord.http.Route.BASE = emu.api_base  # the two-attribute patch for discord.py
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(emu.gateway_url)
        ...start the bot with emu.bot_token (guild_ready_timeout=0.1 keeps start-up fast)...
        since = emu.client.mark()
        sent = emu.client.post_message(emu.ids["general"], "!ping")
        reply = emu.client.wait(since=since, reply_to=sent["id"])

Things to know:

* Always pass ``since=client.mark()`` taken *before* the action to ``wait``; without it
  ``wait`` only sees records created after the wait call itself arrives.
* REST effects (records and their gateway echoes) are published only after the HTTP response
  has been written, and ``click``/``select`` wait until a message is at least 50 ms old, so a
  View bound to a just-sent message is registered by the time the click arrives.
* ``click``/``select``/``submit_modal``/``run_command`` return as soon as the initial callback
  arrives (or the 3 s deadline passes: ``expired``). Follow-ups sent later are not in the
  result: ``wait(since, kind="message_create", source="followup")`` (after a type-5 defer the
  first follow-up edits the thinking message: ``kind="message_update"``).
* A channel's history (``GET /channels/{id}/messages``) is served as Discord serves it:
  ``around``, ``before`` or ``after`` one id, ``limit`` 1–100 (default 50; outside: 400 /
  50035), newest first always (``after=X`` gives the ``limit`` messages right after X). Users'
  messages kept there can be edited (``edit_user_message``: MESSAGE_UPDATE) or deleted
  (``delete_user_message``), sent as if long ago (``post_message(..., age_seconds=3600)``: its
  ``timestamp``), as a system message (``message_type=18``) or through a webhook
  (``webhook_id=``): what a bot back from a restart finds there.
* The control client talks to a second port (``emu.control_url``), so ``set_outage("refuse")``
  can close the main port: new TCP connects to ``base_url`` fail (ECONNREFUSED) and requests on
  already-open keep-alive connections are aborted (counted as ``REFUSED <route>``). Existing
  gateway websockets stay up; new gateway connects fail until ``set_outage(None)``.
* A second bot is in the guild (unless ``Emulator(second_bot=False)``): ``emu.second_bot_token``
  logs in (READY, ``/users/@me``) and posts, reacts and starts threads as
  ``ids["second_bot_id"]``, and edits its own messages (another author's: 403 / 50005, as
  Discord; deleting one needs Manage Messages, which the bots have unless
  ``settings(manage_messages=False)``). Ephemeral messages are not in any channel route (only
  their interaction's token reaches them). Each bot is its own application (app id == bot
  id) with its own slash commands (registering another application's gets 403). An
  interaction goes only to its application's gateway sessions (``interaction_create``
  records ``application_id`` and ``delivered_to``) and is answered as that bot: a click to
  the bot whose message it is, a command to the bot that registered it
  (``run_command(..., application_id=...)`` picks whose; by default the first bot's).
  ``commands(application_id)`` lists one application's commands.
* ``Emulator(bot_token=..., control_token=...)``: a secret bot token (the second bot's, if any,
  is then random: no token derived from the seed is accepted), and a control API that
  needs ``Authorization: Bearer <control_token>`` (``emu.client`` sends it): for an emulator
  other local users can reach. ``emu.configure_world(...)`` names the guild, its channels and
  users; ``emu.serve_web(host, port, access_token, user)`` serves the web client
  (``webclient``: a Discord-like page acting as that user, following the gateway as a user
  client) on its own address; ``discord-bridge try`` runs on these.
"""

from .client import EmulatorClient
from .server import Emulator

__all__ = ["Emulator", "EmulatorClient"]
