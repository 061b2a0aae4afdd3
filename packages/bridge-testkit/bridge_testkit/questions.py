"""What the tests ask the owner end to end. ``QUESTIONS``: an ``AskUserQuestion`` call's input
(the bot's buttons, select and Other… modal; the ``try`` page): one question with a single
answer asked with buttons, one with several answers asked with a select menu. ``FORM``: an MCP
server's form (an Elicitation's ``requested_schema``) as Claude Code 2.1.332 passed it on
(2.1.332, measured): a text field, a choice, a bounded number and a yes/no."""

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

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project name", "description": "What to call it"},
        "color": {"type": "string", "title": "Colour", "enum": ["red", "green"]},
        "count": {"type": "integer", "minimum": 1, "maximum": 5},
        "confirm": {"type": "boolean", "title": "Sure?"},
    },
    "required": ["name"],
}
