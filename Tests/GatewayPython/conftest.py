import pathlib

import pytest

from stack import ROOT, Stack

ARTIFACTS = ROOT / ".local" / "results" / "artifacts"


@pytest.fixture(scope="session")
def stack():
    running = Stack()
    yield running
    running.close()


@pytest.fixture(scope="session")
def artifacts() -> pathlib.Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
