"""Replies that arrive late: the outbox the hooks spooled while Discord did not answer, drained
on the event loop (``outbox_drain``), and a reply's footer brought in by an edit once the turn's
record lands (``reply_footer``).
"""
