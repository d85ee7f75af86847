"""`trecbench judge llm --audit`: old qrels re-judged by a scripted model, the disagreements queued for people."""
from __future__ import annotations

from paths import ROOT

import glob
import hashlib
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from trecbench.demo import sample_dir


def h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


def flipped(qid: str, docid: str, every: int = 6) -> bool:
    """The pairs where the scripted model answers 3 - old grade (about one in `every`)."""
    return h("flip", qid, docid) % every == 0


def scripted_grade(qid: str, docid: str, old: int, every: int = 6) -> int:
    return 3 - old if flipped(qid, docid, every) else old


def key(text: str) -> str:
    """A passage's start as the prompt shows it (white space collapsed)."""
    return " ".join(text.split())[:80]


README_EVERY = 20  # the README's loopback model: 3 - the sample's grade on about one pair in twenty


class Scripted:
    """A loopback model that knows the old grades and each passage's document by the start of its text."""

    def __init__(self, old: dict[tuple[str, str], int], corpus: dict[str, str], topics: dict[str, str], every: int = 6):
        self.old, self.topics, self.every = old, {text: qid for qid, text in topics.items()}, every
        self.docs = {key(text): docid for docid, text in corpus.items()}

    def __call__(self, body: dict) -> str:
        user = body["messages"][-1]["content"]
        qid = self.topics[re.search(r"^Question: (.*)$", user, re.M).group(1)]
        grades = []
        for label, text in re.findall(r"\[P(\d+)\] (.*?)(?=\n\n\[P\d+\] |\Z)", user, re.S):
            docid = self.docs[key(text)]
            grades.append({"passage": f"P{label}", "grade": scripted_grade(qid, docid, self.old[(qid, docid)], self.every),
                           "reason": "scripted"})
        return json.dumps(grades)


def read_qrels(path) -> dict[tuple[str, str], int]:
    out = {}
    for line in open(path, encoding="utf-8"):
        q, _, d, g = line.split()
        out[(q, d)] = int(g)
    return out


def sample_texts() -> tuple[dict[str, str], dict[str, str]]:
    corpus = {}
    for line in open(sample_dir() / "corpus.jsonl", encoding="utf-8"):
        row = json.loads(line)
        corpus[row["id"]] = f"{row['title']}\n{row['contents']}" if row.get("title") else row["contents"]
    topics = dict(line.rstrip("\n").split("\t", 1) for line in open(sample_dir() / "topics.tsv", encoding="utf-8"))
    return corpus, topics


@pytest.fixture
def bench(tmp_path, cli_run):
    sample = sample_dir()
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", sample / "corpus.jsonl", "--topics", sample / "topics.tsv").exit_code == 0
    r = cli_run("qrels", "import", sample / "qrels.txt", "-w", ws, "--judge", "nist")
    assert r.exit_code == 0, r.output
    return ws


@pytest.fixture
def model(llm_server):
    corpus, topics = sample_texts()
    llm_server.script(Scripted(read_qrels(sample_dir() / "qrels.txt"), corpus, topics))
    return ["--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url, "--api-key", "test", "--quiet"]


def expected_disagreements(min_diff: int = 2, topics: set[str] | None = None) -> list[tuple[str, str, int, int]]:
    old = read_qrels(sample_dir() / "qrels.txt")
    rows = [(q, d, g, scripted_grade(q, d, g)) for (q, d), g in old.items() if topics is None or q in topics]
    far = [r for r in rows if abs(r[3] - r[2]) >= min_diff]
    return sorted(far, key=lambda r: (-abs(r[3] - r[2]), r[0], r[1]))


def test_the_audit_lists_exactly_the_pairs_the_model_disagrees_with(bench, cli_run, model):
    r = cli_run("judge", "llm", "-w", bench, *model, "--batch", "5", "--audit", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    old = read_qrels(sample_dir() / "qrels.txt")
    expected = expected_disagreements()
    assert len(expected) > 20  # the script flips enough pairs to mean something
    assert [(p["query_id"], p["doc_id"], p["old"], p["model"]) for p in out["disagreements"]] == expected
    assert all(abs(p["diff"]) >= 2 and p["new"] is None for p in out["disagreements"])
    assert out["pairs"] == out["in_scope"] == len(old) and out["reference"] == "nist" and out["queued"]
    grades = [(g, scripted_grade(q, d, g)) for (q, d), g in old.items()]
    assert out["agreement"]["exact"] == pytest.approx(sum(a == b for a, b in grades) / len(grades))
    assert out["agreement"]["within_one"] == pytest.approx(sum(abs(a - b) <= 1 for a, b in grades) / len(grades))
    assert out["agreement"]["binary"] == pytest.approx(sum((a >= 1) == (b >= 1) for a, b in grades) / len(grades))
    per_topic = [sum(q == t for q, _ in old) for t in {q for q, _ in old}]
    assert out["judging"]["judged"] == len(old) and out["judging"]["calls"] == sum(-(-n // 5) for n in per_topic)
    assert out["judging"]["cost"] > 0
    # the queue is a pool of its own, largest disagreements first within each topic
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    pool = load_pool(Workspace(bench), "audit")
    assert pool.attrs["strategy"] == "audit"
    assert sorted(zip(pool["query_id"], pool["doc_id"])) == sorted((q, d) for q, d, _, _ in expected)
    for qid, group in pool.groupby("query_id"):
        diffs = [abs(old[(qid, d)] - scripted_grade(qid, d, old[(qid, d)])) for d in group.sort_values("priority")["doc_id"]]
        assert diffs == sorted(diffs, reverse=True)


def test_the_table_shows_agreement_disagreements_cost_and_the_queue(bench, cli_run, model):
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--min-diff", "3")
    assert r.exit_code == 0, r.output
    expected = expected_disagreements(3)
    lines = r.stdout.splitlines()
    assert re.match(r"judged 498, failed 0, skipped 0 already judged; 498 calls \(0 from cache\), \d+ input \+ \d+ "
                    r"output tokens, \$0\.\d{4}$", lines[0])
    assert lines[1].startswith("audit of nist by openai/gpt-4o-mini:graded-0-3@") and "498 of 498 pairs re-judged" in lines[1]
    assert re.match(r"agreement: exact 0\.\d{3}, within 1 grade 0\.\d{3}, binarised at grade >= 1 0\.\d{3}, "
                    r"Cohen's kappa 0\.\d{3}$", lines[2])
    assert lines[3] == f"disagreements by 3 or more grades: {len(expected)}"
    assert lines[4].split() == ["topic", "doc", "old", "model", "diff", "new", "by"]
    table = [line.split() for line in lines[5:5 + len(expected)]]
    assert table == [[q, d, str(o), str(m), f"{m - o:+d}", "-", "-"] for q, d, o, m in expected]
    assert lines[5 + len(expected)] == (f"queued: pool 'audit', {len(expected)} pairs, 0 re-judged by people; judge them "
                                        f"blind with: trecbench serve -w {bench} --pool audit")
    # a second run asks nothing and lists the same queue; other settings are refused before any call
    again = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--min-diff", "3")
    assert again.exit_code == 0 and "holds this audit already: no model call" in again.stderr
    assert again.stdout.splitlines()[:4 + len(expected)] == lines[1:5 + len(expected)]
    other = cli_run("judge", "llm", "-w", bench, *model, "--audit")
    assert other.exit_code == 2 and "pool 'audit' holds an audit with other settings" in other.stderr
    assert "choose another --name" in other.stderr


def test_dry_run_limit_topics_and_sample_audit_part_of_the_qrels(bench, cli_run, model, llm_server):
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--dry-run", "--batch", "5")
    old = read_qrels(sample_dir() / "qrels.txt")
    calls = sum(-(-sum(q == t for q, _ in old) // 5) for t in {q for q, _ in old})  # batches of 5 within each topic
    assert r.exit_code == 0 and r.stdout.startswith(f"dry run: {calls} calls to the model (0 answered by the cache) "
                                                    "for 498 judgments") and "nothing was written" in r.stdout
    assert llm_server.requests == []
    from trecbench.store import Workspace

    assert [p.name for p in Workspace(bench).pools()] == []
    # --limit: a part now, the queue only once every pair in scope has a model grade
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T01", "--topic", "T02", "--limit", "10")
    assert r.exit_code == 0, r.output
    scope = sum(q in ("T01", "T02") for q, _ in old)
    assert f"10 of {scope} pairs re-judged" in r.stdout
    assert f"queue not made yet: {scope - 10} of {scope} pairs have no model grade" in r.stdout
    assert [p.name for p in Workspace(bench).pools()] == []
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T01", "--topic", "T02", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["judging"]["judged"] == scope - 10 and out["pairs"] == scope and out["queued"]
    assert [(p["query_id"], p["doc_id"]) for p in out["disagreements"]] == \
        [(q, d) for q, d, _, _ in expected_disagreements(2, {"T01", "T02"})]
    # a seeded sample of pairs, in a queue of another name; the same seed draws the same pairs
    runs = [cli_run("judge", "llm", "-w", bench, *model, "--audit", "--sample", "40", "--seed", "7", "--name", name,
                    "--format", "json") for name in ("s1", "s2")]
    first, second = (json.loads(x.stdout) for x in runs)
    assert first["in_scope"] == 40 and first["disagreements"] == second["disagreements"]
    assert second["judging"]["calls"] == second["judging"]["cached"]  # asked before: from the cache, nothing paid


def test_bad_audit_requests_are_refused_clearly(bench, cli_run, model, tmp_path):
    r = cli_run("judge", "llm", "-w", bench, *model, "--min-diff", "2")
    assert r.exit_code == 2 and "--min-diff go(es) with --audit" in r.output
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--pool", "x")
    assert r.exit_code == 2 and "not with --pool" in r.output
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--reference", "alice")
    assert r.exit_code == 2 and "no judgment by judge 'alice' (a person or an import) to audit" in r.stderr
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T99")
    assert r.exit_code == 2 and "no judgment by nist of topic(s) T99 to audit" in r.stderr
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--min-diff", "9")
    assert r.exit_code == 2
    r = cli_run("judge", "audit", "-w", bench)
    assert r.exit_code == 2 and "the workspace has no audit queue" in r.stderr
    assert cli_run("pool", sample_dir() / "runs" / "bm25.txt", "--depth", "5", "-w", bench).exit_code == 0
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--name", "depth-5")
    assert r.exit_code == 2 and "pool 'depth-5' exists and is not an audit queue: choose another --name" in r.stderr
    r = cli_run("judge", "audit", "-w", bench, "--pool", "depth-5")
    assert r.exit_code == 2 and "pool 'depth-5' is not an audit queue" in r.stderr
    r = cli_run("judge", "audit", "-w", bench, "--pool", "nope")
    assert r.exit_code == 2 and "no pool 'nope'" in r.stderr
    empty = tmp_path / "empty"
    sample = sample_dir()
    assert cli_run("init", empty, "--corpus", sample / "corpus.jsonl", "--topics", sample / "topics.tsv").exit_code == 0
    r = cli_run("judge", "llm", "-w", empty, *model, "--audit")
    assert r.exit_code == 2 and "no judgment by a person or an import to audit" in r.stderr
    assert "Traceback" not in r.output


@pytest.fixture
def people_audited(tmp_path, cli_run, model):
    """A workspace whose old grades are alice's, given in the web app (kind human), audited; and a web client maker."""
    from starlette.testclient import TestClient
    from web_support import csrf_of

    from trecbench.web.app import create_app

    sample = sample_dir()
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", sample / "corpus.jsonl", "--topics", sample / "topics.tsv").exit_code == 0
    r = cli_run("qrels", "import", sample / "qrels.txt", "-w", ws, "--judge", "alice", "--kind", "human")
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "llm", "-w", ws, *model, "--batch", "10", "--audit")
    assert r.exit_code == 0, r.output

    def client_of(name: str) -> TestClient:
        client = TestClient(create_app(ws, require_token=False, pool="audit"), base_url="http://127.0.0.1")
        assert client.post("/login", data={"csrf": csrf_of(client.get("/login").text), "name": name}).status_code == 200
        return client

    return ws, client_of


def test_an_assessor_whose_old_grade_is_audited_holds_the_pair_she_opens(people_audited):
    from web_support import csrf_of

    ws, client_of = people_audited
    expected = expected_disagreements()
    qid = next(q for q, _, _, _ in expected if sum(x[0] == q for x in expected) >= 2)
    first, second = [d for q, d, _, _ in expected if q == qid][:2]
    alice, bob = client_of("alice"), client_of("bob")
    opened = alice.post("/open", data={"csrf": csrf_of(alice.get("/").text), "qid": qid, "docid": first})
    assert opened.status_code == 200 and opened.url.path == "/judge"
    # alice holds `first` (her old grade does not count as judged in the queue): bob is given the next pair
    given = bob.post("/next", data={"csrf": csrf_of(bob.get("/").text), "qid": qid})
    assert re.search(r"docid=([^&\"]+)", str(given.url)).group(1) == second


def test_the_queue_is_served_blind_and_new_grades_show_in_the_list_and_the_export(tmp_path, cli_run, people_audited):
    """Old grades given in the web app (kind human): the queue neither shows nor counts them; new ones are listed."""
    from web_support import csrf_of

    ws, client_of = people_audited
    expected = expected_disagreements()
    queued = {(q, d) for q, d, _, _ in expected}
    client = client_of("alice")
    rows = re.findall(r'<tr data-qid="(\w+)">.*?<span class="count">(\d+) / (\d+)</span>', client.get("/").text, re.S)
    per_topic = {q: sum(qq == q for qq, _ in queued) for q, _ in queued}
    assert {q: (int(done), int(total)) for q, done, total in rows} == {q: (0, n) for q, n in per_topic.items()}
    qid, docid, old, model_grade = expected[0]
    page = client.post("/next", data={"csrf": csrf_of(client.get("/").text), "qid": qid})
    assert page.status_code == 200 and page.url.path == "/judge"
    shown = re.search(r"docid=([^&\"]+)", str(page.url)).group(1)
    assert (qid, shown) in queued  # the topic's largest disagreement comes first
    blind = client.get("/judge", params={"qid": qid, "docid": docid, "suggest": "1"}).text
    assert 'id="blind"' in blind and "suggested-grade" not in blind and "show-suggestion" not in blind
    assert '<strong id="my-grade">not judged</strong>' in blind and "Already judged by" not in blind
    new = (old + 1) % 4
    page = client.get("/judge", params={"qid": qid, "docid": docid})
    done = client.post("/judge", data={"csrf": csrf_of(page.text), "qid": qid, "docid": docid, "grade": str(new)})
    assert done.status_code == 200
    r = cli_run("judge", "audit", "-w", ws, "--format", "json")
    assert r.exit_code == 0, r.output
    listed = json.loads(r.stdout)
    assert listed["rejudged"] == 1 and listed["pool"] == "audit"
    first = listed["disagreements"][0]
    assert (first["query_id"], first["doc_id"], first["old"], first["model"], first["new"], first["assessor"]) == \
        (qid, docid, old, model_grade, new, "alice")
    assert all(p["new"] is None for p in listed["disagreements"][1:])
    table = cli_run("judge", "audit", "-w", ws).stdout
    row = [line.split() for line in table.splitlines() if line.startswith(f"{qid} ") and f" {docid} " in line]
    assert row == [[qid, docid, str(old), str(model_grade), f"{model_grade - old:+d}", str(new), "alice"]]
    assert f"queue: pool 'audit', {len(expected)} pairs, 1 re-judged by people" in table
    nearer = "old" if abs(new - old) < abs(new - model_grade) else "model" if abs(new - model_grade) < abs(new - old) \
        else "halfway"
    assert first["closer"] == nearer and listed["closer"] == {"old": 0, "model": 0, "halfway": 0, nearer: 1}
    assert {"old": "people's new grades: 1 nearer the old grade, 0 nearer the model's, 0 halfway",
            "model": "people's new grades: 0 nearer the old grade, 1 nearer the model's, 0 halfway",
            "halfway": "people's new grades: 0 nearer the old grade, 0 nearer the model's, 1 halfway"}[nearer] in table
    # qrels export takes the new grade, and says whose it is
    r = cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "q.txt", "--provenance", tmp_path / "prov.tsv")
    assert r.exit_code == 0, r.output
    assert read_qrels(tmp_path / "q.txt")[(qid, docid)] == new
    assert r.stdout.splitlines()[1] == "grades by judge (prefer human): alice 498"
    prov = [line.split("\t") for line in (tmp_path / "prov.tsv").read_text().splitlines()]
    assert [row[4] for row in prov if row[0] == qid and row[2] == docid] == ["alice"]


def test_an_audit_queue_does_not_change_how_qrels_export_propagates_duplicates(tmp_path, cli_run, llm_server):
    """The queue is the newest pool but holds no duplicate groups: export keeps the pooled run's groups."""
    import pandas as pd

    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    docs = {"d1": "passage d1 about tides", "d2": "passage d2 about tides (a copy)", "d3": "passage d3 about moons"}
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "contents": t}) + "\n" for d, t in docs.items()))
    (tmp_path / "topics.tsv").write_text("q1\twhat moves the tides\n")
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    pool = pd.DataFrame([("q1", "d1", 1, "d1", True), ("q1", "d2", 2, "d1", False), ("q1", "d3", 3, None, True)],
                        columns=["query_id", "doc_id", "priority", "group", "representative"])
    save_pool(Workspace(ws), "depth-10", "depth", {}, pool)
    (tmp_path / "old.txt").write_text("q1 0 d1 3\nq1 0 d3 0\n")
    assert cli_run("qrels", "import", tmp_path / "old.txt", "-w", ws, "--judge", "nist").exit_code == 0
    before = cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "before.txt")
    assert "(2 judged, 1 propagated from duplicates)" in before.stdout
    llm_server.script(lambda body: json.dumps([{"passage": "P1", "grade": 0, "reason": "-"}]))  # d1: 3 -> 0
    r = cli_run("judge", "llm", "-w", ws, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--audit")
    assert r.exit_code == 0 and "queued: pool 'audit', 1 pair, 0 re-judged" in r.stdout, r.output
    assert [p.name for p in Workspace(ws).pools()] == ["depth-10", "audit"]
    after = cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "after.txt")
    assert "(2 judged, 1 propagated from duplicates)" in after.stdout
    assert (tmp_path / "after.txt").read_text() == (tmp_path / "before.txt").read_text()


# ---- the README's validate -> judge -> audit path, run as written --------------------------------------------

README = ROOT / "README.md"
SHOWN_BASE = "http://127.0.0.1:8000/v1"  # the loopback model's address as the README shows it


def readme_path() -> list[tuple[str, str]]:
    """(command, the output shown under it) of the README's "Validate, judge, audit" block."""
    section = README.read_text(encoding="utf-8").split("## Validate, judge, audit\n", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    steps: list[tuple[str, str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], ""))
        elif steps:
            steps[-1] = (steps[-1][0], steps[-1][1] + line + "\n")
    return steps


def run_readme_path(folder: Path, base_url: str, cli_run) -> list[tuple[str, str]]:
    """Run the README's commands in `folder` (holding the sample as `sample/`); (command, stdout) of each."""
    out = []
    for command, _ in readme_path():
        args = []
        for word in shlex.split(command.replace(SHOWN_BASE, base_url))[1:]:
            args += sorted(glob.glob(word)) if "*" in word else [word]
        result = cli_run(*args)
        assert result.exit_code == 0, f"{command}\n{result.output}"
        out.append((command, result.stdout))
    return out


def shape(text: str) -> str:
    """Output with the numbers that follow from token counts (tokens, dollars) blanked."""
    text = re.sub(r"\d+ input \+ \d+ output tokens, \$\d+\.\d+", "N input + N output tokens, $N", text)
    return re.sub(r"\b\d+\.\d{4}(\s+)(good|fair|poor)\b", r"N\1\2", text)


def test_the_readme_validate_judge_audit_path_runs_and_prints_what_it_shows(tmp_path, monkeypatch, cli_run, llm_server):
    shutil.copytree(sample_dir(), tmp_path / "sample")
    monkeypatch.chdir(tmp_path)
    corpus, topics = sample_texts()
    llm_server.script(Scripted(read_qrels(sample_dir() / "qrels.txt"), corpus, topics, every=README_EVERY))
    shown = readme_path()
    assert any("--audit" in c for c, _ in shown) and any(c.startswith("trecbench judge validate") for c, _ in shown)
    ran = run_readme_path(tmp_path, llm_server.base_url, cli_run)
    for (command, expected), (_, got) in zip(shown, ran):
        assert shape(got).rstrip("\n") == shape(expected).rstrip("\n"), command


def test_a_max_cost_stop_makes_no_queue_and_the_rerun_finishes_it(bench, cli_run, model, llm_server):
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T03", "--max-cost", "0")
    assert r.exit_code == 3, r.output
    assert llm_server.requests == [] and "stopped early" in r.stderr
    assert "queue not made yet" in r.stdout
    from trecbench.store import Workspace

    assert Workspace(bench).pools() == []
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T03")
    assert r.exit_code == 0, r.output
    expected = expected_disagreements(2, {"T03"})
    assert len(expected) == 4 and "queued: pool 'audit', 4 pairs" in r.stdout
    assert [line.split()[:2] for line in r.stdout.splitlines() if line.startswith("T03 ")] == \
        [[q, d] for q, d, _, _ in expected]


def test_an_audit_through_the_providers_batch_interface_is_queued_when_the_batch_is_collected(bench, cli_run, model,
                                                                                             llm_server):
    from trecbench.store import Workspace

    llm_server.hold_batches = True
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T03", "--batch", "5", "--provider-batch")
    assert r.exit_code == 0, r.output
    scope = sum(q == "T03" for q, _ in read_qrels(sample_dir() / "qrels.txt"))
    assert f"submitted: {-(-scope // 5)} requests" in r.stdout and f"{scope} documents wait for a batch" in r.stdout
    assert f"0 of {scope} pairs re-judged" in r.stdout and "waiting for a provider batch" in r.stdout
    assert Workspace(bench).pools() == [] and len(llm_server.batches) == 1
    llm_server.hold_batches = False
    r = cli_run("judge", "llm", "-w", bench, *model, "--audit", "--topic", "T03", "--batch", "5", "--collect")
    assert r.exit_code == 0, r.output
    assert f"judged {scope}, failed 0" in r.stdout and "replies read" in r.stdout
    expected = expected_disagreements(2, {"T03"})
    assert f"queued: pool 'audit', {len(expected)} pairs" in r.stdout and len(llm_server.batches) == 1
    assert [line.split()[:4] for line in r.stdout.splitlines() if line.startswith("T03 ")] == \
        [[q, d, str(o), str(m)] for q, d, o, m in expected]


def test_a_queue_counts_as_judged_and_in_use_only_once_people_judge_it(people_audited, cli_run, tmp_path, model):
    """The old grades are the queue's subject, not its judgments: `pool list` counts none, and it can be deleted."""
    from web_support import csrf_of

    ws, client_of = people_audited
    n = len(expected_disagreements())
    listed = json.loads(cli_run("pool", "list", "-w", ws, "--format", "json").stdout)
    assert [(p["name"], p["to_judge"], p["judged"]) for p in listed] == [("audit", n, 0)]
    r = cli_run("pool", "delete", "audit", "-w", ws)
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "llm", "-w", ws, *model, "--batch", "10", "--audit")  # made again, from the model's grades
    assert r.exit_code == 0 and "judged 0, failed 0, skipped 498 already judged; 0 calls" in r.stdout
    assert f"queued: pool 'audit', {n} pairs" in r.stdout
    alice = client_of("alice")
    qid, docid, _, _ = expected_disagreements()[0]
    page = alice.get("/judge", params={"qid": qid, "docid": docid})
    assert alice.post("/judge", data={"csrf": csrf_of(page.text), "qid": qid, "docid": docid, "grade": "1"}).status_code == 200
    listed = json.loads(cli_run("pool", "list", "-w", ws, "--format", "json").stdout)
    assert [(p["name"], p["judged"]) for p in listed] == [("audit", 1)]
    r = cli_run("pool", "delete", "audit", "-w", ws)
    assert r.exit_code == 2 and "is in use (1 judgment(s)" in r.stderr


def test_a_running_web_app_offers_a_queue_made_while_it_serves(tmp_path, cli_run, model):
    """The app serves the newest pool: a queue made while it runs is offered, whatever it read of the topic before."""
    from starlette.testclient import TestClient
    from web_support import csrf_of

    from trecbench.web.app import create_app

    sample = sample_dir()
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", sample / "corpus.jsonl", "--topics", sample / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", sample / "qrels.txt", "-w", ws, "--judge", "alice", "--kind", "human").exit_code == 0
    assert cli_run("pool", sample / "runs" / "bm25.txt", "--depth", "20", "-w", ws).exit_code == 0
    client = TestClient(create_app(ws, require_token=False), base_url="http://127.0.0.1")
    assert client.post("/login", data={"csrf": csrf_of(client.get("/login").text), "name": "alice"}).status_code == 200
    qid, docid, _, _ = expected_disagreements()[0]
    assert client.get("/topic", params={"qid": qid}).status_code == 200  # the topic read while depth-20 is served
    done = client.post("/next", data={"csrf": csrf_of(client.get("/").text), "qid": qid})
    assert done.url.path == "/topic"  # alice judged all of depth-20's pairs of the topic
    assert cli_run("judge", "llm", "-w", ws, *model, "--batch", "10", "--audit").exit_code == 0
    given = client.post("/next", data={"csrf": csrf_of(client.get("/").text), "qid": qid})
    assert given.url.path == "/judge" and re.search(r"docid=([^&\"]+)", str(given.url)).group(1) == docid
