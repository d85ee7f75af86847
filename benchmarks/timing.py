"""What the benchmarks share: running a command under /usr/bin/time for its CPU seconds and peak RSS."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time


def measure(argv: list[list[str]], env: dict | None = None, cores: str | None = None) -> dict:
    """Run the commands one after another: CPU seconds (summed), peak RSS in MiB (largest), wall; stdouts.

    `cores` ("0") pins them to those CPUs with taskset (one core: what one thread costs in wall time).
    """
    cpu = peak = 0.0
    outputs = []
    start = time.perf_counter()
    for cmd in argv:
        pin = ["taskset", "-c", cores] if cores else []
        with tempfile.NamedTemporaryFile("r") as usage:
            proc = subprocess.run([*pin, "/usr/bin/time", "-o", usage.name, "-f", "%U %S %M", *cmd], env=env,
                                  capture_output=True, text=True, check=False)
            if proc.returncode:
                sys.exit(f"{' '.join(cmd[:3])} failed:\n{proc.stderr}")
            user, system, rss_kib = usage.read().split()[-3:]
        outputs.append(proc.stdout)
        cpu += float(user) + float(system)
        peak = max(peak, int(rss_kib) / 1024)
    return {"cpu": cpu, "wall": time.perf_counter() - start, "peak_mib": peak, "out": outputs}
