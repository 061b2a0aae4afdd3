"""A message's turn: a Discord message typed into its session's pane (``relay``), the turn's
status message and ⏹ (``progress``), a turn with no progress (``stalls``), and the messages that
wait for the turn to end (``queue``, ``/queue``: ``queue_command``).
"""
