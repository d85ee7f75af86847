"""Install footprint: distributions and megabytes that `pip install` brings into a fresh venv, for trecbench's core
and `[all]`, beside ir_measures, ir_measures with pandas (the issue's goal for the core) and ranx.

Each target is installed the same way: a new venv (`python -m venv`), then one `pip install SPEC` (not editable;
trecbench from this checkout, the peers from the package index), with pip's cache as it is. Counted: the
distributions the install added (dist-info folders that the empty venv did not have: pip and setuptools, which
come with every venv, are left out) and the disk usage those additions take in site-packages (du's MiB: blocks,
not file lengths), and the install's wall time. The goal (issue 23): the core no bigger than ir_measures plus
pandas, so at most about 15 distributions and 350 MB. The ratios are printed last, with the date and commit.

    python benchmarks/install_size.py [--only core,all,ir_measures,ir_measures+pandas,ranx] [--python python3]

It downloads what pip's cache lacks (about 1.5 GB for all targets) and takes minutes on a busy machine.

Last run (2026-12-02 00:00-00:24 UTC, pyproject.toml of commit 7edc110 (the run ended at 78b1dd5, which changed
no dependency), Python 3.11, a busy 2-core machine, load 5.5 at the end; seconds include downloads):
    core 12 distributions, 321 MB, 222 s (click, ir_measures, numpy, pandas, python_dateutil, pytrec_eval_terrier,
    rapidfuzz, scipy, tomli_w, tqdm, trecbench, tzdata: no pyarrow); all 84, 783 MB, 696 s; ir_measures 4, 215 MB;
    ir_measures+pandas 7, 302 MB; ranx 37, 670 MB. The core meets the goal: 3 distributions and 29 MB under it,
    1.06x the MB of ir_measures+pandas (1.71x its distributions: click, rapidfuzz, tqdm, tomli_w and trecbench).
    Before pyarrow left the core (2026-12-01, commit cbdc54c): core 12 distributions, 489 MB; all 84, 951 MB.
    Before the extras (issue 23): `pip install .` brought 86 distributions and 995 MB.
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "core": [str(ROOT)],
    "all": [f"{ROOT}[all]"],
    "ir_measures": ["ir-measures"],
    "ir_measures+pandas": ["ir-measures", "pandas"],
    "ranx": ["ranx"],
}
GOAL = {"distributions": 15, "mib": 350}


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages"))
    if not found:
        raise SystemExit(f"no site-packages under {venv}")
    return found[0]


def disk_usage(paths: list[Path]) -> int:
    """Bytes of disk the files under `paths` take (du's count: allocated blocks), each file once."""
    files = [p for p in paths if not p.is_dir()]
    for top in paths:
        if top.is_dir():
            files += [Path(folder, name) for folder, _, names in os.walk(top) for name in names]
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in files:
        st = os.lstat(path)
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def measure(name: str, specs: list[str], python: str, scratch: Path) -> dict:
    """Install `specs` into a fresh venv; what it added: distributions, MiB, seconds."""
    venv = scratch / name.replace("+", "_")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    site = site_packages(venv)
    before = set(os.listdir(site))
    started = time.monotonic()
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *specs], check=True)
    seconds = time.monotonic() - started
    added = sorted(set(os.listdir(site)) - before)
    distributions = sorted(entry.removesuffix(".dist-info") for entry in added if entry.endswith(".dist-info"))
    mib = disk_usage([site / entry for entry in added]) / 2**20
    return {"name": name, "distributions": distributions, "mib": mib, "seconds": seconds}


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(TARGETS), help="comma-separated targets: " + ", ".join(TARGETS))
    parser.add_argument("--python", default=sys.executable, help="the Python that makes each venv")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s): {', '.join(unknown)}")
    version = subprocess.run([args.python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    print(f"fresh venvs with Python {version}; each target: one `pip install` (pip and setuptools not counted)",
          flush=True)
    results = {}
    with tempfile.TemporaryDirectory(prefix="trecbench-install-size-") as tmp:
        for name in names:
            print(f"installing {name} ...", flush=True)
            results[name] = r = measure(name, TARGETS[name], args.python, Path(tmp))
            print(f"  {len(r['distributions'])} distributions, {r['mib']:.0f} MB, {r['seconds']:.0f} s: "
                  + " ".join(r["distributions"]), flush=True)
    print()
    print(f"{'target':<20} {'distributions':>13} {'MB':>7} {'install s':>10}")
    for r in results.values():
        print(f"{r['name']:<20} {len(r['distributions']):>13} {r['mib']:>7.0f} {r['seconds']:>10.0f}")
    if "core" in results:
        core = results["core"]
        n, mib = len(core["distributions"]), core["mib"]
        print(f"goal: core at most {GOAL['distributions']} distributions and {GOAL['mib']} MB: "
              f"{n} distributions ({'meets' if n <= GOAL['distributions'] else 'misses'} it, "
              f"{n - GOAL['distributions']:+d}), {mib:.0f} MB ({'meets' if mib <= GOAL['mib'] else 'misses'} it, "
              f"{mib - GOAL['mib']:+.0f} MB)")
        for other in ("ir_measures+pandas", "ir_measures", "ranx", "all"):
            if other in results:
                r = results[other]
                print(f"ratio core / {other}: {n / len(r['distributions']):.2f}x distributions, "
                      f"{mib / r['mib']:.2f}x MB")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"measured {when}, commit {commit()}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
