"""Options and fixtures shared by every test tier."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files (configs/<lab>/, tests/unit/golden/) from the code instead of "
                          "comparing against them")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when pytest runs with --update-golden."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root."""
    return REPO
