"""Where things are in the checkout, so a test file can move between folders without counting parents."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SRC = ROOT / "src" / "trecbench"
SAMPLE = SRC / "sample"
README = ROOT / "README.md"
