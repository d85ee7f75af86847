"""The main job on the bundled sample benchmark: validate its files, score its runs, show where to go next."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

DEMO_MEASURES = ("nDCG@10", "R@100", "AP", "P@10", "RR", "Judged@10")


def sample_dir() -> Path:
    """The folder of the sample benchmark shipped in the package."""
    return Path(str(resources.files("trecbench") / "sample"))


@dataclass(frozen=True)
class DemoResult:
    scores: pd.DataFrame  # a row per run, a column per measure, best nDCG@10 first
    qrels: Path
    runs: list[Path]
    topics: int
    judgments: int


def run_demo(measures: tuple[str, ...] = DEMO_MEASURES) -> DemoResult:
    """Score every sample run against the sample qrels (trec_eval 9 numbers, missing topics as zero)."""
    from trecbench.evaluation import evaluate
    from trecbench.qrels import read_qrels
    from trecbench.runs import validate_run
    from trecbench.qrels import validate_qrels
    from trecbench.errors import InputError

    root = sample_dir()
    qrels = root / "qrels.txt"
    runs = sorted((root / "runs").glob("*.txt"))
    problems = validate_qrels(qrels) + [p for r in runs for p in validate_run(r)]
    if problems:
        raise InputError.of(problems)
    judged = read_qrels(qrels)
    scores = evaluate(qrels, runs, list(measures)).sort_values(measures[0], ascending=False)
    return DemoResult(scores, qrels, runs, judged["query_id"].nunique(), len(judged))
