"""Nugget assignment: does an answer state each nugget of its topic? One small assigner per method.

Labels are AutoNuggetizer's: `support`, `partial_support`, `not_support`. A label of None means the
assigner failed for that nugget (an LLM batch that never parsed): the topic is then incomplete, and
it is reported and left out of the scores, never counted as "not supported".

Assigners, chosen by name (`get_assigner("citation")`):

- `citation` (offline): citations against the nuggets' supporting documents, plus lexical overlap.
- `string` (offline): normalised Levenshtein similarity against windows of answer sentences.
- `llm`: a model judges each answer against its topic's nuggets, 10 nuggets a call.

Assignments made elsewhere (AutoNuggetizer's `assign` output, NIST's files) are read by
`read_assignments` (or `read_assignment_files` for several files) and scored the same way. The labels
and importances are kept as written too (`NuggetAssignment.given_label`, `given_importance`), so that
nuggetizer's rules, which count only the exact strings, can be applied to them.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Protocol, TextIO, Union

from trecbench.files.output import write_output
from trecbench.errors import InputError, Problem, checked

SUPPORT, PARTIAL, NOT = "support", "partial_support", "not_support"
LABELS = (SUPPORT, PARTIAL, NOT)
_ALIASES = {
    "support": SUPPORT, "supported": SUPPORT, "full_support": SUPPORT, "fully_supported": SUPPORT,
    "partial_support": PARTIAL, "partially_supported": PARTIAL, "partial": PARTIAL, "partially_support": PARTIAL,
    "not_support": NOT, "not_supported": NOT, "no_support": NOT, "unsupported": NOT, "none": NOT,
}
_FAILED = ("failed", "failure", "error")
PathLike = Union[str, Path]


class NuggetAssignment(NamedTuple):
    """One nugget's label for one answer; `label` None means the assigner failed for it."""

    nugget_id: str
    text: str
    importance: str
    label: str | None
    reason: str = ""
    given_label: str | None = None  # the label as written in a file, when it differs from `label`
    given_importance: str | None = None  # the importance as written, when it differs from `importance`

    @property
    def written_label(self) -> str:
        """The label as its file wrote it (what nuggetizer compares), "failed" for a failure."""
        return self.given_label if self.given_label is not None else (self.label or "failed")

    @property
    def written_importance(self) -> str:
        return self.given_importance if self.given_importance is not None else self.importance


@dataclass(frozen=True)
class TopicAssignment:
    """The labels of every nugget of one topic for one run's answer (or for its missing answer)."""

    run_id: str
    qid: str
    assignments: tuple[NuggetAssignment, ...]
    error: str = ""  # why some labels are missing (None)
    answered: bool = True  # False: the run gave no answer to this topic (every nugget not_support)
    source: tuple[str, int] | None = field(default=None, compare=False)  # (file, line) it was read from

    @property
    def complete(self) -> bool:
        return all(a.label is not None for a in self.assignments)


class Assigner(Protocol):
    """Labels nuggets against answers: one TopicAssignment per (run, topic) of `pairs`."""

    name: str

    def assign(self, pairs: list[tuple[Any, Any]]) -> list[TopicAssignment]:  # (Answer, TopicNuggets) pairs
        ...


# name -> (module under trecbench.evaluation.answers.assign, class); imported only when asked for
ASSIGNERS = {
    "citation": ("citation", "CitationAssigner"),
    "string": ("string", "StringAssigner"),
    "llm": ("llm", "LLMAssigner"),
}


def get_assigner(name: str, **options: Any) -> Assigner:
    """The assigner registered under `name`, built with its options."""
    if name not in ASSIGNERS:
        raise ValueError(f"unknown assigner {name!r}; choose from {', '.join(ASSIGNERS)}")
    module, cls = ASSIGNERS[name]
    return getattr(importlib.import_module(f"trecbench.evaluation.answers.assign.{module}"), cls)(**options)


def normalise_label(value: Any) -> tuple[str | None, bool]:
    """(label, ok): a known label in any common spelling; (None, True) for a recorded failure."""
    if not isinstance(value, str):
        return None, False
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    if key in _ALIASES:
        return _ALIASES[key], True
    if key in _FAILED:
        return None, True
    return None, False


def read_assignments(path: PathLike, *, run_id: str | None = None) -> list[TopicAssignment]:
    """Assignments from a JSONL file, one line per (run, topic).

    Accepts AutoNuggetizer's assign output `{query, qid, answer_text, response_length, run_id,
    nuggets: [{text, importance, assignment}]}` and NIST's `{qid, run_id, nuggets: [...]}`, and
    what `write_assignments` writes (which adds nugget `id` and `reason`). A line without `run_id`
    takes `run_id` (default: the file's name without extension). An assignment of "failed" marks
    the topic incomplete. Raises InputError listing every problem.
    """
    from trecbench.files.lines import iter_json_objects, json_id

    where = str(path)
    default_run = run_id or Path(path).name.split(".")[0]
    out: list[TopicAssignment] = []
    problems: list[Problem] = []
    first: dict[tuple[str, str], int] = {}
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        qid = record.get("qid", record.get("topic_id"))
        qid = json_id(qid)
        if qid is None:
            problems.append(Problem(where, number, "missing or empty 'qid'"))
            continue
        run = record.get("run_id", default_run)
        run = str(run).strip() if isinstance(run, (str, int)) and str(run).strip() else default_run
        items = record.get("nuggets")
        if not isinstance(items, list):
            problems.append(Problem(where, number, f"topic {qid!r}: 'nuggets' must be a list"))
            continue
        labels: list[NuggetAssignment] = []
        bad = False
        for n, item in enumerate(items, start=1):
            what = f"topic {qid!r}, nugget {n}"
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                problems.append(Problem(where, number, f"{what}: expected an object with 'text'"))
                bad = True
                continue
            importance = str(item.get("importance", "")).strip().lower()
            if importance not in ("vital", "okay"):
                problems.append(Problem(where, number, f"{what}: importance {item.get('importance')!r} is not "
                                                       "vital or okay"))
                bad = True
                continue
            label, ok = normalise_label(item.get("assignment"))
            if not ok:
                problems.append(Problem(where, number, f"{what}: assignment {item.get('assignment')!r} is not one "
                                                       f"of {', '.join(LABELS)}"))
                bad = True
                continue
            nid = str(item.get("id", f"{qid}-{n}"))
            given, written = item.get("assignment"), item.get("importance")
            labels.append(NuggetAssignment(nid, item["text"], importance, label, str(item.get("reason", "")),
                                           None if given == (label or "failed") else given,
                                           None if written == importance else written))
        if bad:
            continue
        key = (run, qid)
        if key in first:
            problems.append(Problem(where, number, f"second assignment of run {run!r} for topic {qid!r} (first on "
                                                   f"line {first[key]})"))
            continue
        first[key] = number
        error = "" if all(a.label is not None for a in labels) else str(record.get("error") or "assignment failed")
        answered = record.get("answered", True) is not False
        out.append(TopicAssignment(run, qid, tuple(labels), error, answered, (where, number)))
    return checked(out, problems, where, "assignments")


def read_assignment_files(paths: Iterable[PathLike]) -> list[TopicAssignment]:
    """Assignments from several files; the same (run, topic) in two files must carry the same labels.

    A (run, topic) given twice with identical labels is kept once; with different labels it is an
    InputError naming both places (every conflict listed), so the order of the files never decides a score.
    """
    out: list[TopicAssignment] = []
    first: dict[tuple[str, str], TopicAssignment] = {}
    problems: list[Problem] = []
    errors: list[Problem] = []
    for path in paths:
        try:
            read = read_assignments(path)
        except InputError as e:
            errors.extend(e.problems)
            continue
        for t in read:
            key = (t.run_id, t.qid)
            seen = first.get(key)
            if seen is None:
                first[key] = t
                out.append(t)
            elif _labels(seen) != _labels(t):
                where, line = t.source or (str(path), 0)
                there = f"{seen.source[0]}:{seen.source[1]}" if seen.source else "an earlier file"
                problems.append(Problem(where, line, f"run {t.run_id!r}, topic {t.qid!r} is assigned differently in "
                                                     f"{there}"))
    if errors or problems:
        raise InputError.of(errors + problems)
    return out


def _labels(t: TopicAssignment) -> tuple:
    return tuple((a.text, a.written_importance, a.written_label) for a in t.assignments), t.answered


def write_assignments(assignments: Iterable[TopicAssignment], out: PathLike | TextIO) -> None:
    """Write assignments as JSONL in the shape AutoNuggetizer and NIST use (plus nugget `id` and `reason`).

    A failed label is written as "failed" and the line carries `error`; a topic the run did not answer
    carries `"answered": false`; labels and importances read from a file are written as they were
    given. `read_assignments` reads it back to the same scores.
    """
    lines = []
    for t in assignments:
        record: dict[str, Any] = {"qid": t.qid, "run_id": t.run_id, "nuggets": [
            {"id": a.nugget_id, "text": a.text, "importance": a.written_importance, "assignment": a.written_label,
             **({"reason": a.reason} if a.reason else {})} for a in t.assignments]}
        if t.error:
            record["error"] = t.error
        if not t.answered:
            record["answered"] = False
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    if isinstance(out, (str, Path)):
        write_output(out, "".join(lines))
    else:
        out.write("".join(lines))
