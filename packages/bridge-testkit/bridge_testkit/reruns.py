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
    lines = text.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("E ")]
    start = errors[0] if errors else 0
    return lines[start : start + FIRST_LINES] or ["(no failure text)"]


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Reruns(), "bridge-reruns")
