"""`judge llm` on a pool other judges graded: the first line counts their grades, `--only-unjudged` judges only
the pairs nobody graded (live and dry runs), and the summary line counts the pairs another run of this judge took."""
from __future__ import annotations

import subprocess
import sys

from judge_bench import JUDGE, POOL, grader, judge_args, rows

from trecbench.store import Judge, Judgment, Workspace


def graded_by(bench, name: str, kind: str, pairs) -> None:
    Workspace(bench).record_many([Judgment(q, d, 1, Judge(kind, name)) for q, d in pairs])


def first_line(r) -> str:
    return next(line for line in r.stderr.splitlines() if line.startswith("judge "))


def test_a_dry_run_counts_the_pairs_people_and_imports_already_graded(bench, llm_server, cli_run):
    graded_by(bench, "alice", "human", POOL)
    graded_by(bench, "nist", "import", POOL[:2])
    r = cli_run(*judge_args(bench, llm_server, "--dry-run"))
    assert r.exit_code == 0, r.output
    assert first_line(r) == (f"judge {JUDGE}: 6 documents to judge in 6 calls; 0 already judged; of these, other "
                             "judges already graded: alice (people) 6, nist (imported) 2 (--only-unjudged leaves "
                             "them out)")
    assert r.stdout.startswith("dry run: 6 calls to the model")


def test_only_unjudged_on_a_pool_people_judged_fully_has_nothing_to_do_and_imports_no_model_library(bench, llm_server):
    graded_by(bench, "alice", "human", POOL)
    code = ("import sys\nfrom trecbench.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n    status = e.code\n"
            "print('LITELLM', 'litellm' in sys.modules, status)\n")
    args = [str(a) for a in judge_args(bench, llm_server, "--only-unjudged", "--dry-run")]
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert "LITELLM False 0" in p.stdout, p.stdout + p.stderr  # litellm's import was most of the dry run's time
    assert (f"judge {JUDGE}: 0 documents to judge in 0 calls; 0 already judged; 6 graded by other judges left out "
            "(--only-unjudged): alice (people) 6") in p.stderr
    assert "dry run: nothing to judge, no call to the model" in p.stdout
    assert llm_server.requests == []


def test_only_unjudged_judges_only_the_pairs_nobody_graded(bench, llm_server, cli_run):
    graded_by(bench, "alice", "human", POOL[:4])
    llm_server.script(grader)
    dry = cli_run(*judge_args(bench, llm_server, "--only-unjudged", "--dry-run"))
    assert dry.exit_code == 0 and dry.stdout.startswith("dry run: 2 calls to the model"), dry.output
    r = cli_run(*judge_args(bench, llm_server, "--only-unjudged"))
    assert r.exit_code == 0, r.output
    assert "2 documents to judge in 2 calls; 0 already judged; 4 graded by other judges left out" in first_line(r)
    assert sorted((q, d) for q, d, _, _, name in rows(bench) if name == JUDGE) == sorted(POOL[4:])
    assert len(llm_server.requests) == 2 and r.stdout.startswith("judged 2, failed 0, skipped 0 already judged")


def test_only_unjudged_is_refused_with_an_audit(bench, llm_server, cli_run):
    r = cli_run(*judge_args(bench, llm_server, "--only-unjudged", "--audit"))
    assert r.exit_code == 2 and "--only-unjudged judges a pool" in r.stderr


def test_the_summary_counts_the_pairs_another_run_of_this_judge_holds(bench, llm_server, cli_run):
    from trecbench.judging.llm import Leases

    other = Leases(Workspace(bench), JUDGE, Workspace(bench).newest_judgment())  # a run alive in this process
    assert other.take("t2", ["d6"])[0] == ["d6"]
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].startswith("judged 5, failed 0, skipped 0 already judged; ")
    assert r.stdout.splitlines()[0].endswith("; 1 left to another run of this judge")
    assert ("t2", "d6") not in {(q, d) for q, d, *_ in rows(bench)}
