"""Every rerun listed at the end of the run with its first failure.

pytest-rerunfailures runs a failed end-to-end test once more; a test that then passes counts as
passed, so the race that failed it would go unseen. This plugin (loaded by tests/conftest.py)
collects each report whose outcome is ``rerun`` — in the process that prints the summary, which
under pytest-xdist is the controller: the workers' reports reach it through the same hook — and
prints them in a section of their own, each with the first lines of what failed.
"""

from __future__ import annotations

import pytest

FIRST_LINES = 12  # of a rerun's failure: enough for the assertion and where it was raised
LAST_LINES = 8  # and its end, when longer: a screen's bottom, what ran (a CI rerun once showed
# only a blank screen's first lines, and not the processes its message named below them)


class Reruns:
    def __init__(self) -> None:
        self.reports: list[pytest.TestReport] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.outcome == "rerun":
            self.reports.append(report)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.reports:
            return
        terminalreporter.write_sep("=", f"{len(self.reports)} rerun(s): a race to chase", red=True)
        for report in self.reports:
            terminalreporter.write_line(f"RERUN {report.nodeid} ({report.when})", red=True)
            for line in first_failure(report):
                terminalreporter.write_line(f"    {line}")


def first_failure(report: pytest.TestReport) -> list[str]:
    """The failure's own lines: the ``E`` lines and the place they were raised first (a
    traceback's source lines come before them and say less)."""
    text = str(report.longrepr or "").rstrip()
    lines = _blank_runs_folded(text.splitlines())
    errors = [i for i, line in enumerate(lines) if line.startswith("E ")]
    start = errors[0] if errors else 0
    shown = lines[start : start + FIRST_LINES] or ["(no failure text)"]
    rest = [line for line in lines[start + FIRST_LINES :] if line.startswith("E ")]
    if len(rest) > LAST_LINES:
        shown.append(f"E   … {len(rest) - LAST_LINES} lines …")
    return shown + rest[-LAST_LINES:]


def _blank_runs_folded(lines: list[str]) -> list[str]:
    """Runs of empty ``E`` lines (a blank screen) as one line saying how many."""
    folded: list[str] = []
    blank = 0
    for line in [*lines, "end"]:
        if line.startswith("E") and not line[1:].strip():
            blank += 1
            continue
        if blank:
            folded.append(f"E   ({blank} empty lines)" if blank > 1 else "E")
            blank = 0
        folded.append(line)
    return folded[:-1]


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Reruns(), "bridge-reruns")
