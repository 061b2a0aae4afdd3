"""Discord without discord.py: the REST client, delivery with its outbox, rendering."""
