"""The sample's support grades, scored by the real commands: the table docs/support.md shows, in the order a
person puts the three systems in (rag_good cites correctly, rag_partial cites the right pages for claims they
do not make here and there, rag_poor cites nothing)."""
import math
import shutil

from paths import ROOT

from tests.support.cli_support import run_cli

SAMPLE = ROOT / "src" / "trecbench" / "sample"


def test_the_sample_support_table_is_the_one_the_docs_show_and_orders_the_systems(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "sample")
    sample = tmp_path / "sample"
    bench = tmp_path / "bench"
    assert run_cli("init", bench, "--corpus", sample / "corpus.jsonl", "--topics", sample / "topics.tsv").exit_code == 0
    added = run_cli("support", "add", "-w", bench, *sorted((sample / "answers").glob("*.jsonl")))
    assert added.stdout.splitlines()[:3] == ["36 answers, 88 sentences, 84 sentence-citation pairs",
                                             "answers without any citation: 12", "sentences citing nothing: 15"]
    assert "answer without any citation: run rag_poor topic T01" in added.stdout  # listed, not dropped
    imported = run_cli("support", "import", "-w", bench, sample / "support.jsonl")
    assert "imported 84 support judgments by sample-assessor" in imported.stderr
    result = run_cli("eval", "support", "-w", bench)
    assert result.exit_code == 0 and result.stderr == ""  # every pair judged: nothing left out
    assert result.stdout in (ROOT / "docs" / "support.md").read_text()
    header, *lines = result.stdout.splitlines()
    assert header.split()[1:] == ["SupportP", "SupportR", "Unsupported", "Judged", "SupportP_micro", "SupportR_micro",
                                  "Unsupported_micro"]  # no grade is contradicts: no Contradicts column
    rows = {line.split()[0]: [math.nan if v == "-" else float(v) for v in line.split()[1:]] for line in lines}
    good, partial, poor = rows["rag_good"], rows["rag_partial"], rows["rag_poor"]
    for column in (1, 5):  # SupportR and its micro value: higher is better
        assert good[column] > partial[column] > poor[column] == 0
    for column in (0, 4):  # SupportP: rag_poor has no citation to be precise about (shown -)
        assert good[column] > partial[column] and math.isnan(poor[column])
    for column in (2, 6):  # Unsupported: lower is better; every sentence of rag_poor is unsupported
        assert good[column] < partial[column] < poor[column] == 1
    assert math.isnan(poor[3])  # Judged: no pair to judge
