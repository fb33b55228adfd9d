"""The one exception root of twin and its few subclasses.

The CLI turns any `TwinError` into a clear message and exit code 2; library code never exits.
"""

from __future__ import annotations

from dataclasses import dataclass


class TwinError(Exception):
    """Root of every error twin raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One mistake in a user's input: where it is, what is wrong and how to fix it."""

    file: str
    field: str
    message: str
    fix: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.field}: {self.message}"
        if self.fix:
            text += f"; {self.fix}"
        return text


class PlanError(TwinError):
    """Bad input found by a pipeline stage. Carries every problem the stage found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class RuntimeBackendError(TwinError):
    """A runtime could not create, inspect or remove part of a lab."""


class GnmiError(TwinError):
    """A gNMI request failed."""


class DrillError(TwinError):
    """A drill could not inject, measure or restore."""
