"""The relevance-judging prompt, written for trecbench: a 0-3 graded scale, several passages per call.

A prompt is identified by its name and the sha256 of its text (both recorded with every judgment),
so changing a word makes a new judge rather than silently mixing judgments.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from trecbench.errors import InputError

GRADED_0_3 = """You are assessing search results for a test collection. For each passage, decide how well it \
answers the question, on this scale:

3 - the passage is devoted to the question and states the exact answer.
2 - the passage answers the question in part, or the answer is present but buried among other material.
1 - the passage is about the subject of the question but does not answer it.
0 - the passage has nothing to do with the question.

Judge only from what the passage says, not from what you know. A passage that merely repeats words of the \
question without answering it is a 1 at most."""

MULTI_CRITERIA = """You are assessing search results for a test collection. Before you grade a passage, weigh four \
questions about it, each on its own:

Exactness - does it state what the question asks for, precisely, rather than something near it?
Coverage - how much of what the question needs does it give: all of it, part of it, or none?
Topicality - is it about the subject of the question at all?
Trust - could someone act on it as written, or is it vague, hedged, outdated or self-contradictory?

Then give one grade from those answers:

3 - on topic, exact, covers what the question needs, and can be trusted.
2 - on topic and partly answers it: the answer is incomplete, buried, or not fully trustworthy.
1 - on topic but gives no usable answer.
0 - off topic.

Judge only from what the passage says, not from what you know. In the reason, name the criterion that \
decided the grade."""

REPLY_FORMAT = """Reply with JSON only: a list with one object per passage, in the order given, like
[{"passage": "P1", "grade": 2, "reason": "one short sentence"}]"""


@dataclass(frozen=True)
class Prompt:
    name: str
    instructions: str
    max_grade: int = 3

    @property
    def sha256(self) -> str:
        return hashlib.sha256((self.instructions + "\n" + REPLY_FORMAT).encode("utf-8")).hexdigest()


BUILTIN = {"graded-0-3": Prompt("graded-0-3", GRADED_0_3), "multi-criteria": Prompt("multi-criteria", MULTI_CRITERIA)}


def load_prompt(spec: str | None) -> Prompt:
    """A built-in prompt by name, or a text file holding the instructions (the reply format is appended)."""
    if not spec:
        return BUILTIN["graded-0-3"]
    if spec in BUILTIN:
        return BUILTIN[spec]
    path = Path(spec)
    if not path.is_file():
        raise InputError(spec, 0, f"no such prompt: not a file and not one of {', '.join(sorted(BUILTIN))}")
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise InputError(spec, 0, "empty prompt file")
    return Prompt(path.stem, text)


@dataclass(frozen=True)
class Example:
    """A judged passage shown to the model before its own passages (few-shot)."""

    question: str
    passage: str
    grade: int


def build_messages(prompt: Prompt, question: str, passages: list[str], *, narrative: str | None = None,
                   examples: list[Example] = ()) -> list[dict]:
    """Chat messages asking for the grades of `passages` (labelled P1, P2, ...) for `question`."""
    system = prompt.instructions + "\n\n" + REPLY_FORMAT
    parts = []
    if examples:
        parts.append("Examples of judged passages (for other questions):")
        for e in examples:
            parts.append(f"Question: {e.question}\nPassage: {_clip(e.passage)}\nGrade: {e.grade}")
        parts.append("Now judge these.")
    parts.append(f"Question: {question}")
    if narrative:
        parts.append(f"What the asker is looking for: {narrative}")
    parts.append("\n\n".join(f"[P{i}] {_clip(p)}" for i, p in enumerate(passages, 1)))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _clip(text: str, limit: int = 6000) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


class ReplyError(ValueError):
    """A model reply that does not give one valid grade per passage; `reason` is told to the model on re-ask."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse_grades(text: str, n_passages: int, max_grade: int = 3) -> list[tuple[int, str]]:
    """(grade, reason) per passage from a model's reply; raises ReplyError if any is missing or invalid."""
    data = _json_value(text)
    if isinstance(data, dict):
        data = data.get("grades") or data.get("results") or data.get("passages") or [data]
    if not isinstance(data, list):
        raise ReplyError("the reply is not a JSON list")
    found: dict[int, tuple[int, str]] = {}
    for position, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise ReplyError(f"item {position} is not an object")
        label = str(item.get("passage", f"P{position}")).strip().upper().lstrip("[").rstrip("]")
        m = re.fullmatch(r"P?(\d+)", label)
        if not m:
            raise ReplyError(f"item {position}: unknown passage label {label!r}")
        index = int(m.group(1))
        grade = item.get("grade")
        if isinstance(grade, str) and grade.strip().lstrip("-").isdigit():
            grade = int(grade)
        if isinstance(grade, float) and grade.is_integer():
            grade = int(grade)
        if not isinstance(grade, int) or isinstance(grade, bool) or not 0 <= grade <= max_grade:
            raise ReplyError(f"passage P{index}: grade {item.get('grade')!r} is not an integer 0-{max_grade}")
        found[index] = (grade, str(item.get("reason", "")).strip())
    missing = [i for i in range(1, n_passages + 1) if i not in found]
    if missing:
        raise ReplyError(f"no grade for passage(s) {', '.join(f'P{i}' for i in missing)}")
    extra = [i for i in found if i > n_passages]
    if extra:
        raise ReplyError(f"grades for passages that were not given: {extra}")
    return [found[i] for i in range(1, n_passages + 1)]


def _json_value(text: str):
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    for opener in ("[", "{"):
        start = text.find(opener)
        if start < 0:
            continue
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
            return value
        except json.JSONDecodeError:
            continue
    raise ReplyError("no JSON in the reply")
