"""The controls: the session slash commands (``commands``), the control panel (``panel``),
threads archived, deleted and their worktrees (``threads``), projects added and removed
(``projects``, ``project_remove``).
"""
