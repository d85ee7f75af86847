"""Peak resident memory of a `trecbench` command run in its own process, for tests that bound it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from paths import SRC

# A small launcher starts the command and reports its child's peak RSS. Measured straight from the test
# process, the figure could include the test process itself: a forked child's high-water mark starts at
# its parent's resident size and survives exec, and pytest grows to hundreds of MB over a session.
_LAUNCHER = """
import json, resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    proc = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
print(json.dumps([proc.returncode, proc.stdout.decode(), proc.stderr.decode(), peak_kib / 1024]))
"""


class Measured(NamedTuple):
    """What a command did: its exit status, standard output and error, and its peak RSS in MB."""

    status: int
    out: str
    err: str
    peak_mb: float


def run_measured(args: list[str], stdin: Path | None = None) -> Measured:
    """`trecbench ARGS` in its own process, standard input from `stdin` (else empty)."""
    env = dict(os.environ, PYTHONPATH=str(SRC.parent), LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, str(stdin or os.devnull), sys.executable, "-m", "trecbench",
                          *args], env=env, capture_output=True, text=True, check=True, close_fds=True)
    return Measured(*json.loads(out.stdout))
