"""An ``AskUserQuestion`` call's input for the tests that answer a question prompt end to end
(the bot's buttons, select and Other… modal; the ``try`` page): one question with a single
answer asked with buttons, one with several answers asked with a select menu."""

from __future__ import annotations

QUESTIONS = {
    "questions": [
        {
            "question": "Which database should we use?",
            "header": "Database",
            "options": [
                {"label": "Postgres", "description": "Relational, robust"},
                {"label": "SQLite", "description": "One file"},
            ],
            "multiSelect": False,
        },
        {
            "question": "Which features do you want?",
            "header": "Features",
            "options": [
                {"label": "Auth", "description": "Log in"},
                {"label": "Search", "description": "Find things"},
                {"label": "Billing", "description": "Get paid"},
            ],
            "multiSelect": True,
        },
    ]
}
