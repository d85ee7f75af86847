"""The report's support section: `eval support`'s SupportP and SupportR per run, or what would fill it."""
import re

from paths import ROOT

from tests.support.cli_support import run_cli

SAMPLE = ROOT / "src" / "trecbench" / "sample"


def support_html(path) -> str:
    match = re.search(r'<section id="support">(.*?)</section>', path.read_text(encoding="utf-8"), re.S)
    assert match, "no support section"
    return match.group(1)


def test_the_report_shows_the_samples_support_best_run_first(tmp_path):
    bench = tmp_path / "bench"
    run_cli("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv")
    run_cli("support", "add", "-w", bench, *sorted((SAMPLE / "answers").glob("*.jsonl")))
    run_cli("support", "import", "-w", bench, SAMPLE / "support.jsonl")
    assert run_cli("report", "-w", bench, "-o", tmp_path / "r.html", "--quiet", "--iterations", "200").exit_code == 0
    html = support_html(tmp_path / "r.html")
    rows = re.findall(r'<th scope="row">(rag_\w+)', html)
    assert rows == ["rag_good", "rag_partial", "rag_poor"]
    assert '<span class="mean">0.8694</span>' in html and '<span class="mean">0.9188</span>' in html
    assert "rag_poor: Unsupported 1.0000, Judged - (mean over topics)" in html  # it cites nothing: no pair judged
    assert "rag_partial: Unsupported 0.0417, Judged 1.0000 (mean over topics)" in html
    assert 'href="#support"' in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_without_registered_sentences_the_section_says_what_would_fill_it(tmp_path):
    bench = tmp_path / "bench"
    run_cli("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv")
    run_cli("report", "-w", bench, "-o", tmp_path / "r.html", "--quiet")
    assert "trecbench support add -w BENCH rag-run.jsonl" in support_html(tmp_path / "r.html")
    run_cli("support", "add", "-w", bench, SAMPLE / "answers" / "good.jsonl")
    run_cli("report", "-w", bench, "-o", tmp_path / "r.html", "--quiet")
    assert "trecbench support import -w BENCH support.jsonl" in support_html(tmp_path / "r.html")
