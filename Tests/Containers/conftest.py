import json
import os
import time

import pytest

from deployment import ROOT, Deployment

FAULTS = ROOT / ".local" / "results" / "containers-faults.json"


@pytest.fixture(scope="session")
def deployment():
    """docker-compose.yml up under its own project; `down -v` afterwards (CONTAINERS_KEEP=1 keeps it)."""
    running = Deployment()
    running.up_seconds = running.up()
    yield running
    if os.environ.get("CONTAINERS_KEEP") != "1":
        running.down(volumes=True)


@pytest.fixture(scope="session")
def shared():
    """What one test leaves for a later one (a user, a document, a published version)."""
    return {}


@pytest.fixture(scope="session")
def faults():
    """Each fault's figures, for the wrapper's table and deploy/RELIABILITY.md."""
    rows = []
    yield rows
    FAULTS.parent.mkdir(parents=True, exist_ok=True)
    FAULTS.write_text(json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "faults": rows}, indent=2) + "\n")
