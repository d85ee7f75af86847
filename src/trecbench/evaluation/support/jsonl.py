"""Support judgments as JSONL, in and out: one row per sentence-citation pair and judge.

A row is `{"run_id", "topic_id", "sentence", "citation", "grade", "judge"}`: `sentence` the index of the
sentence in the run's answer to the topic (0-based, the order of the answer's `answer` list), `citation`
the cited docid, `grade` one of full, partial, none, contradicts. `export` adds `judge_kind` (human, model,
import). An imported row is recorded as a judgment of kind `import` by the judge it names (without one:
the judge `--judge` names, else the file's name), on the registered sentence's current text. A file is
checked whole before anything is recorded: every bad row is listed as `path:line: what is wrong`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from trecbench.answers.support import GRADES_WITH_CONTRADICTS
from trecbench.errors import InputError, Problem
from trecbench.store.judgments import Judge
from trecbench.store.support import SupportJudgment, SupportSentence

from .scoring import chosen_judgments

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike

FIELDS = ("run_id", "topic_id", "sentence", "citation", "grade", "judge")


class Imported(NamedTuple):
    """What `import_support` recorded."""

    judgments: int
    judges: tuple[str, ...]


def read_support_rows(path: str | Path, sentences: list[SupportSentence], *,
                      judge: str | None = None) -> list[SupportJudgment]:
    """The file's rows as judgments of kind `import` on the registered `sentences`; raises InputError listing
    every row with an unknown grade, a sentence not registered, or a citation its sentence does not make."""
    from trecbench.files.lines import iter_json_objects

    where = str(path)
    registered = {(s.run_id, s.qid, s.sentence): s for s in sentences}
    default = judge or Path(path).stem
    out: list[SupportJudgment] = []
    problems: list[Problem] = []
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        judgment, message = _judgment(record, registered, default)
        if message:
            problems.append(Problem(where, number, message))
        elif judgment is not None:
            out.append(judgment)
    if not out and not problems:
        problems.append(Problem(where, 0, "empty file: no support judgments"))
    if problems:
        raise InputError.of(problems)
    return out


def _judgment(record: dict[str, Any], registered: dict[tuple[str, str, int], SupportSentence],
              default: str) -> tuple[SupportJudgment | None, str]:
    missing = [f for f in FIELDS[:5] if f not in record]
    if missing:
        return None, f"missing field{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))}"
    run, qid, n, docid, grade = (record[f] for f in FIELDS[:5])
    if not all(isinstance(v, str) and v.strip() for v in (run, qid, docid)):
        return None, "'run_id', 'topic_id' and 'citation' must be non-empty strings (the citation: a docid)"
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        return None, f"'sentence' must be a sentence's index in the answer (an integer from 0), not {n!r}"
    if grade not in GRADES_WITH_CONTRADICTS:
        return None, f"unknown grade {grade!r}: one of {', '.join(GRADES_WITH_CONTRADICTS)}"
    name = record.get("judge") or default
    if not isinstance(name, str):
        return None, f"'judge' must be a judge's name (a string), not {name!r}"
    s = registered.get((run, qid, n))
    if s is None:
        return None, (f"sentence {n} of run {run!r}'s answer to topic {qid!r} is not registered "
                      "(register the answers with `trecbench support add`)")
    if docid not in s.citations:
        cited = ", ".join(s.citations) if s.citations else "nothing"
        return None, f"sentence {n} of run {run!r}'s answer to topic {qid!r} does not cite {docid!r} (it cites {cited})"
    return SupportJudgment(run, qid, n, docid, s.text_hash, grade, Judge("import", name)), ""


def import_support(ws: WorkspaceLike, path: str | Path, *, judge: str | None = None) -> Imported:
    """Record a JSONL file of support judgments in the workspace (module doc), all or nothing."""
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    judgments = read_support_rows(path, ws.support_sentences(), judge=judge)
    ws.record_support(judgments)
    return Imported(len(judgments), tuple(dict.fromkeys(j.judge.name for j in judgments)))


def export_support(ws: WorkspaceLike, stream: IO[str], *, judge: str | None = None) -> int:
    """Write the grade scored for each judged pair (`chosen_judgments`: a person's first, or `judge`'s) as
    JSONL rows with the judge's name and kind, by run, topic, sentence and docid; returns the rows written.
    Judgments of an older text of a sentence are not written."""
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    chosen = chosen_judgments(ws.support_rows(), judge, ws.support_sentences())
    for (run, qid, n, docid), c in chosen.items():
        stream.write(json.dumps({"run_id": run, "topic_id": qid, "sentence": n, "citation": docid, "grade": c.grade,
                                 "judge": c.judge, "judge_kind": c.judge_kind}, ensure_ascii=False) + "\n")
    return len(chosen)
