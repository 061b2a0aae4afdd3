"""While the owner is away: a usage limit resumed at its reset and a spend budget's stop
(``watch``), ``/usage`` and the panel's usage line (``usage``), prompts scheduled for later
(``schedule``) and run when due (``scheduler``).
"""
