"""Entry points that Claude Code runs, one per hook event.

Each is a thin script: read the event JSON from stdin, call into :mod:`bridge`
(:func:`bridge.handlers.run_hook`), print the hook's answer, exit 0 whatever happens.
``discord-bridge hooks install`` registers them in Claude Code's settings.json with the
absolute path of this interpreter. They are programs, not modules: nothing imports this
package (``bridge.claude.settings`` finds the folder by path). It is a package only so that
it is installed: as ``bridge.hooks`` (pyproject.toml maps that package to this folder), so an
install adds one top-level package, ``bridge``, and nothing named ``hooks``.
"""
