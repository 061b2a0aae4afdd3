"""Claude Code's prompts on Discord: the buttons, selects, modals and reactions that answer
permission, question and plan prompts (``interactions``), an MCP server's form
(``elicitation``), and the screens no hook reports, offered as prompts (``screens``).
"""
