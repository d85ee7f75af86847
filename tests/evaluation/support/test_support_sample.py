"""The sample's support grades, scored by the real commands: the table docs/support.md shows, in the order a
person puts the three systems in."""
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
    assert added.stdout.splitlines()[0] == "36 answers, 88 sentences, 100 sentence-citation pairs"
    imported = run_cli("support", "import", "-w", bench, sample / "support.jsonl")
    assert "imported 100 support judgments by sample-assessor" in imported.stderr
    result = run_cli("eval", "support", "-w", bench)
    assert result.exit_code == 0 and result.stderr == ""  # every pair judged: nothing left out
    assert result.stdout in (ROOT / "docs" / "support.md").read_text()
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in result.stdout.splitlines()[1:]}
    good, partial, poor = rows["rag_good"], rows["rag_partial"], rows["rag_poor"]
    for column in (0, 1, 5, 6):  # SupportP, SupportR and their micro values: higher is better
        assert good[column] > partial[column] > poor[column]
    for column in (2, 7):  # Unsupported: lower is better
        assert good[column] < partial[column] < poor[column]
    assert good[3] == partial[3] == 0 < poor[3]  # only rag_poor's citations contradict it
