"""The real trec_eval, built from the source tarballs, and small adversarial qrels + run pairs to compare with it."""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from paths import ROOT

TOOLS = {"9": ("trec_eval-9.0.8-src.tar.gz", "te908"), "10": ("trec_eval-10.0-src.tar.gz", "te10")}


# The binaries outlive the session here, one per tarball content: a warm run does not compile them again (about
# 11 CPU s for the two), and a changed tarball gets a new name. A binary is written under another name and renamed,
# so that a build killed halfway, or two workers building at once, never leave a half-written one.
CACHE = ROOT / ".trec_eval_build"


def build_trec_eval(tools: Path, into: Path, cache: Path | None = CACHE) -> tuple[dict[str, Path], str]:
    """{version: binary} built with make into `into` (or found in `cache`, where it is kept), or ({}, why not)."""
    binaries = {}
    for version, (tarball, folder) in TOOLS.items():
        source = tools / tarball
        if not source.is_file():
            return {}, f"{source} not found"
        kept = cache / f"{folder}-{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}" if cache else None
        if kept and kept.is_file() and os.access(kept, os.X_OK):
            binaries[version] = kept
            continue
        if shutil.which("make") is None or shutil.which(os.environ.get("CC", "gcc")) is None:
            return {}, "make or gcc not found"
        with tarfile.open(source) as tar:
            tar.extractall(into, filter="data")
        done = subprocess.run(["make", "-C", str(into / folder)], capture_output=True, text=True)
        binary = into / folder / "trec_eval"
        if done.returncode != 0 or not binary.is_file():
            return {}, f"building {tarball} failed: {done.stderr[-500:]}"
        if kept:
            kept.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=kept.parent, prefix=f".{kept.name}.", delete=False) as partial:
                partial.write(binary.read_bytes())
            os.chmod(partial.name, 0o755)
            os.replace(partial.name, kept)
            binary = kept
        binaries[version] = binary
    return binaries, ""


def adversarial_case(seed: int) -> tuple[str, str]:
    """(qrels text, run text): ties, float32-only ties, graded and negative grades, missing and empty topics."""
    rnd = random.Random(seed)
    topics = [f"{rnd.choice(['', '0', 't'])}{i}" for i in rnd.sample(range(1, 40), rnd.randint(1, 6))]
    docs = [f"d{i}" for i in range(rnd.randint(3, 14))]
    max_grade = rnd.choice([1, 2, 3, 4])
    qrels, run = [], []
    for topic in topics:
        kind = rnd.random()
        judged = rnd.sample(docs, rnd.randint(0 if kind < 0.1 else 1, len(docs)))
        for doc in judged:
            grade = rnd.choice([-1, 0, 0] + list(range(1, max_grade + 1)))
            qrels.append(f"{topic} 0 {doc} {grade}")
        if not judged:  # a topic whose only judgment is negative
            qrels.append(f"{topic} 0 {docs[0]} -1")
        if rnd.random() < 0.2:
            continue  # a qrels topic the run does not have
        retrieved = rnd.sample(docs + [f"x{i}" for i in range(4)], rnd.randint(1, len(docs) + 4))
        base = rnd.choice([1.0, 10.0, 1e6])
        for rank, doc in enumerate(retrieved, 1):
            r = rnd.random()
            if r < 0.25:
                score = base  # exact ties
            elif r < 0.4:
                score = base + rnd.choice([1e-9, 2e-9, 3e-12])  # ties only as C floats
            else:
                score = base - rank * rnd.choice([0.5, 0.25, 1.0]) + rnd.randint(0, 2)
            run.append(f"{topic} Q0 {doc} {rank} {score!r} tag{rnd.randint(1, 2)}")
    if rnd.random() < 0.3:
        run.append(f"unjudged{seed} Q0 d1 1 1.0 tag1")  # a run topic the qrels do not have
    rnd.shuffle(run)
    if not run:
        run.append(f"{topics[0]} Q0 d1 1 1.0 tag1")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"
