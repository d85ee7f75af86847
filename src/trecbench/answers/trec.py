"""TREC RAG answer files (2024 and 2025 JSONL): read, and validate the way the track's checkers do.

2024, one line per topic::

    {"run_id", "topic_id", "topic", "references": [docid, ...], "response_length",
     "answer": [{"text", "citations": [index into references, ...]}, ...]}

2025::

    {"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative", "prompt"?},
     "references": [docid, ...], "answer": [{"text", "citations": [index or docid, ...]}, ...]}

The track's limits: an answer of at most 400 words (whitespace-separated, all sentences together),
at most 20 references (2024) or 100 (2025), citations that point into `references`, no reference
listed twice, one answer per topic, and the topic text as given in the topics file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Union

from trecbench.files.lines import iter_json_objects
from trecbench.errors import InputError, Problem

PathLike = Union[str, Path]
RAG24, RAG25 = "rag24", "rag25"
MAX_WORDS = 400
MAX_REFERENCES = {RAG24: 20, RAG25: 100}


class AnswerSentence(NamedTuple):
    """One sentence of an answer and the documents it cites (docids, resolved from indices)."""

    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One run's answer to one topic."""

    run_id: str
    qid: str
    sentences: tuple[AnswerSentence, ...]
    references: tuple[str, ...] = ()
    topic: str | None = None  # the topic text the run was given (2024 `topic`, 2025 `narrative`)
    response_length: int | None = None  # as declared by the run (2024)
    team_id: str | None = None
    type: str | None = None  # 2025: "automatic" or "manual"
    format: str = RAG24
    path: str = ""
    line: int = 0

    @property
    def text(self) -> str:
        return " ".join(s.text.strip() for s in self.sentences if s.text.strip())

    @property
    def words(self) -> int:
        """Words of the whole answer, counted as the track counts them (split on whitespace)."""
        return sum(len(s.text.split()) for s in self.sentences)

    @property
    def cited(self) -> tuple[str, ...]:
        """Every cited docid, each once, in order of first citation."""
        return tuple(dict.fromkeys(d for s in self.sentences for d in s.citations))


def read_answers(path: PathLike) -> list[Answer]:
    """Every answer in file order; raises InputError listing every problem that stops reading.

    Limits (words, references) and duplicates are not checked here: `validate_answers` does that.
    """
    answers, found = _scan(path)
    problems = [p for p, blocks in found if blocks]
    if problems:
        raise InputError.of(problems)
    return answers


def check_answers(
    path: PathLike,
    *,
    topics: dict[str, str] | None = None,
    max_words: int | None = MAX_WORDS,
    max_references: int | None = None,
) -> tuple[list[Answer], list[Problem]]:
    """Read and validate one file: the answers that could be read and every problem, in line order.

    topics: {qid: text}; when given, every answer's topic must be one of them with the same text,
        and every topic must have an answer from each run in the file.
    max_words: the word limit of a whole answer (None: no limit).
    max_references: the most references an answer may list (None: 20 for 2024 files, 100 for 2025).
    """
    where = str(path)
    answers, found = _scan(path)
    problems = [p for p, _ in found]
    first: dict[tuple[str, str], int] = {}
    runs: dict[str, int] = {}
    for a in answers:
        key = (a.run_id, a.qid)
        if key in first:
            problems.append(Problem(where, a.line, f"second answer of run {a.run_id!r} to topic {a.qid!r} "
                                                   f"(first on line {first[key]}): one answer per topic"))
        else:
            first[key] = a.line
        runs.setdefault(a.run_id, a.line)
        if max_words is not None and a.words > max_words:
            problems.append(Problem(where, a.line, f"answer to topic {a.qid!r} has {a.words} words, more than "
                                                   f"the limit of {max_words}"))
        limit = max_references if max_references is not None else MAX_REFERENCES[a.format]
        if len(a.references) > limit:
            problems.append(Problem(where, a.line, f"answer to topic {a.qid!r} lists {len(a.references)} "
                                                   f"references, more than the limit of {limit}"))
        if topics is not None:
            if a.qid not in topics:
                problems.append(Problem(where, a.line, f"topic {a.qid!r} is not in the topics file"))
            elif a.topic is not None and _squash(a.topic) != _squash(topics[a.qid]):
                problems.append(Problem(where, a.line, f"topic text of {a.qid!r} differs from the topics file: "
                                                       f"{_short(a.topic)!r} vs {_short(topics[a.qid])!r}"))
    if len(runs) > 1:
        names = ", ".join(f"{r!r} (line {n})" for r, n in runs.items())
        problems.append(Problem(where, 0, f"{len(runs)} run ids in one file: {names}; submit one run per file"))
    if topics is not None and not any(p.line == 0 and p.message == "no such file" for p in problems):
        for run in runs:
            missing = [q for q in topics if (run, q) not in first]
            if missing:
                shown = " ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
                problems.append(Problem(where, 0, f"run {run!r} has no answer for {len(missing)} of {len(topics)} "
                                                  f"topics: {shown}"))
    problems.sort(key=lambda p: (p.line == 0, p.line))
    return answers, problems


def validate_answers(path: PathLike, **options: Any) -> list[Problem]:
    """Every problem in an answers file (see `check_answers` for the options); empty means clean."""
    return check_answers(path, **options)[1]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, limit: int = 50) -> str:
    text = _squash(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _scan(path: PathLike) -> tuple[list[Answer], list[tuple[Problem, bool]]]:
    """(answers read, [(problem, blocks reading)]) for one file, line by line."""
    where = str(path)
    p = Path(path)
    if not p.is_file():
        return [], [(Problem(where, 0, "no such file"), True)]
    answers: list[Answer] = []
    found: list[tuple[Problem, bool]] = []
    for number, record, error in iter_json_objects(p):
        if record is None:
            found.append((Problem(where, number, error), True))
            continue
        answer, errors = _answer(record, where, number)
        found.extend((Problem(where, number, msg), blocks) for msg, blocks in errors)
        if answer is not None:
            answers.append(answer)
    if not answers and not found:
        found.append((Problem(where, 0, "empty file: no answers"), True))
    return answers, found


def _text_field(record: dict, key: str, errors: list[tuple[str, bool]], *, required: bool = True,
                ids: bool = False) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            errors.append((f"missing field {key!r}", True))
        return None
    if ids and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or (required and not value.strip()):
        errors.append((f"field {key!r} must be a non-empty string", True))
        return None
    return value.strip() if ids else value


def _answer(record: dict[str, Any], path: str, number: int) -> tuple[Answer | None, list[tuple[str, bool]]]:
    errors: list[tuple[str, bool]] = []
    if isinstance(record.get("metadata"), dict):
        fmt = RAG25
        meta = record["metadata"]
        run_id = _text_field(meta, "run_id", errors, ids=True)
        qid = _text_field(meta, "narrative_id", errors, ids=True)
        topic = _text_field(meta, "narrative", errors, required=False)
        team_id = _text_field(meta, "team_id", errors, required=False, ids=True)
        run_type = _text_field(meta, "type", errors, required=False)
        response_length = None
        errors = [(f"metadata: {m}", b) for m, b in errors]
    else:
        fmt = RAG24
        run_id = _text_field(record, "run_id", errors, ids=True)
        qid = _text_field(record, "topic_id", errors, ids=True)
        topic = _text_field(record, "topic", errors, required=False)
        team_id = run_type = None
        response_length = record.get("response_length")
        if response_length is not None and (isinstance(response_length, bool) or not isinstance(response_length, int)
                                            or response_length < 0):
            errors.append(("field 'response_length' must be a non-negative integer", False))
            response_length = None
    label = f"topic {qid!r}: " if qid else ""
    references = record.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, str) and r.strip() for r in references):
        errors.append((f"{label}'references' must be a list of docids (strings)", True))
        references = []
    references = [r.strip() for r in references]
    seen: dict[str, int] = {}
    for i, ref in enumerate(references):
        if ref in seen:
            errors.append((f"{label}reference {ref!r} is listed twice (positions {seen[ref]} and {i})", False))
        else:
            seen[ref] = i
    items = record.get("answer")
    sentences: list[AnswerSentence] = []
    if not isinstance(items, list):
        errors.append((f"{label}'answer' must be a list of {{text, citations}} objects", True))
        items = []
    elif not items:
        errors.append((f"{label}'answer' is empty", False))
    for n, item in enumerate(items):
        sentence = _sentence(item, n, references, seen, label, errors)
        if sentence is not None:
            sentences.append(sentence)
    if any(blocks for _, blocks in errors) or run_id is None or qid is None:
        return None, errors
    return Answer(run_id, qid, tuple(sentences), tuple(references), topic, response_length, team_id, run_type, fmt,
                  path, number), errors


def _sentence(item: Any, n: int, references: list[str], positions: dict[str, int], label: str,
              errors: list[tuple[str, bool]]) -> AnswerSentence | None:
    where = f"{label}answer sentence {n}"
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        errors.append((f"{where}: expected an object with a 'text' string", True))
        return None
    raw = item.get("citations", [])
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        errors.append((f"{where}: 'citations' must be a list", True))
        return None
    cited: list[str] = []
    for c in raw:
        if isinstance(c, bool) or not isinstance(c, (int, str)):
            errors.append((f"{where}: citation {c!r} is neither an index into references nor a docid", True))
        elif isinstance(c, int):
            if 0 <= c < len(references):
                cited.append(references[c])
            else:
                errors.append((f"{where}: citation {c} is out of range: {len(references)} references "
                               f"(indices 0 to {len(references) - 1})", True))
        elif c.strip() in positions:
            cited.append(c.strip())
        elif references:
            errors.append((f"{where}: cited docid {c!r} is not in references", False))
            cited.append(c.strip())
        else:
            cited.append(c.strip())  # no references listed: citations name documents directly
    return AnswerSentence(item["text"], tuple(dict.fromkeys(cited)))


def answers_by_run(answers: Iterable[Answer]) -> dict[str, dict[str, Answer]]:
    """{run_id: {qid: answer}}, runs and topics in file order (the first answer of a topic wins)."""
    out: dict[str, dict[str, Answer]] = {}
    for a in answers:
        out.setdefault(a.run_id, {}).setdefault(a.qid, a)
    return out
