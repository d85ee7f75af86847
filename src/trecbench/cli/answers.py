"""`trecbench answers`: check RAG answer files (TREC RAG 2024 and 2025 JSONL)."""
from __future__ import annotations

import click

from trecbench.cli.common import validate_files


@click.group()
def answers() -> None:
    """Read and validate RAG answer files (TREC RAG 2024 and 2025 JSONL).

    \b
    Example:
      trecbench answers validate run.rag24.jsonl --topics topics.rag24.test.txt
    """


@answers.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--topics", "topics_path", type=click.Path(dir_okay=False), default=None,
              help="Topics file: every answer's topic must be in it with the same text, and every topic answered.")
@click.option("--max-words", type=click.IntRange(min=1), default=400, show_default=True,
              help="Most words a whole answer may have (TREC RAG 2024/2025: 400).")
@click.option("--no-word-limit", is_flag=True, help="Do not check the word limit.")
@click.option("--max-references", type=click.IntRange(min=1), default=None,
              help="Most references an answer may list [default: 20 for 2024 files, 100 for 2025].")
def validate(files: tuple[str, ...], topics_path: str | None, max_words: int, no_word_limit: bool,
             max_references: int | None) -> None:
    """Check answer FILES as the track's validators do, listing every problem with its line.

    Checked: valid JSON with the 2024 fields (run_id, topic_id, topic, references, response_length,
    answer) or the 2025 ones (metadata {team_id, run_id, type, narrative_id, narrative}, references,
    answer); the word limit; the number of references; citations that are indices into references
    (or docids listed there); a reference listed twice; one answer per topic and one run per file;
    with --topics, topic ids, topic texts and topics without an answer.

    \b
    Example:
      trecbench answers validate run.rag24.jsonl --topics topics.rag24.test.txt
      trecbench answers validate run.rag25.jsonl --topics topics.rag25.test.jsonl --max-words 400
    """
    from trecbench.answers import check_answers

    topics = None
    if topics_path:
        from trecbench.topics import read_topics

        topics = {t.qid: t.text for t in read_topics(topics_path)}
    def check(path: str) -> tuple:
        return check_answers(path, topics=topics, max_words=None if no_word_limit else max_words,
                             max_references=max_references)

    def summary(found) -> str:
        return (f"{len(found)} answer{'s' * (len(found) != 1)}, run {', '.join(sorted({a.run_id for a in found}))}, "
                f"format {', '.join(sorted({a.format for a in found}))}")

    validate_files(files, check, summary)
