"""Files the bridge keeps: the private runtime dir, per-session records, decision files."""
