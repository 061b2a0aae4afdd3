"""Discord-free sessions: which pane serves which channel; start, adopt, resume, stop; typing."""
