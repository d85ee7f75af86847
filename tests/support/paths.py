"""Where things are in the checkout, so a test file can move between folders without counting parents."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SRC = ROOT / "src" / "trecbench"
SAMPLE = SRC / "sample"
README = ROOT / "README.md"


def _shared_data() -> Path:
    """The reference data: $TRECBENCH_SHARED_DATA, else ../shared/data beside the checkout, else /work/shared/data."""
    if os.environ.get("TRECBENCH_SHARED_DATA"):
        return Path(os.environ["TRECBENCH_SHARED_DATA"])
    for candidate in (ROOT.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "data"


SHARED = _shared_data()  # the tests' `shared` fixture refuses (or skips) when it is absent
