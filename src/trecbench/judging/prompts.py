"""The relevance-judging prompt (its text lives in `trecbench.llm.prompts`): 0-3 grades, several passages per call.

A prompt is identified by its name and the sha256 of its text (both recorded with every judgment),
so changing a word makes a new judge rather than silently mixing judgments.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from trecbench.errors import InputError
from trecbench.llm.errors import ParseError
from trecbench.llm.parse import final_answer
from trecbench.llm.prompts import RELEVANCE, RELEVANCE_MULTI_CRITERIA, clip

GRADED_0_3 = RELEVANCE.instructions
MULTI_CRITERIA = RELEVANCE_MULTI_CRITERIA
REPLY_FORMAT = RELEVANCE.reply_format


@dataclass(frozen=True)
class Prompt:
    name: str
    instructions: str
    max_grade: int = 3

    @property
    def sha256(self) -> str:
        return hashlib.sha256((self.instructions + "\n" + REPLY_FORMAT).encode("utf-8")).hexdigest()


MAX_PROMPT_BYTES = 100_000

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
    if path.stat().st_size > MAX_PROMPT_BYTES:
        raise InputError(spec, 0, f"a prompt file is at most {MAX_PROMPT_BYTES // 1000} KB of instructions, "
                                  f"this one has {path.stat().st_size:,} bytes")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError as e:
        raise InputError(spec, 0, f"not UTF-8 text (byte {e.start}): save the instructions as UTF-8") from None
    if "\x00" in text or text.startswith("\ufeff"):
        raise InputError(spec, 0, "not a text file (NUL bytes or a byte-order mark): save it as UTF-8 text")
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
                   examples: Sequence[Example] = ()) -> list[dict]:
    """Chat messages asking for the grades of `passages` (labelled P1, P2, ...) for `question`."""
    system = prompt.instructions + "\n\n" + REPLY_FORMAT
    parts = []
    if examples:
        parts.append("Examples of judged passages (for other questions):")
        for e in examples:
            parts.append(f"Question: {e.question}\nPassage: {clip(e.passage)}\nGrade: {e.grade}")
        parts.append("Now judge these.")
    parts.append(f"Question: {question}")
    if narrative:
        parts.append(f"What the asker is looking for: {narrative}")
    parts.append("\n\n".join(f"[P{i}] {clip(p)}" for i, p in enumerate(passages, 1)))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]



def grade_bound(n_passages: int) -> int:
    """`max_tokens` for a reply grading `n_passages` passages."""
    return RELEVANCE.max_tokens(n_passages)


def grades_reader(n_passages: int, max_grade: int = 3):
    """Reads one JSON value into [(grade, reason) or None per passage]; see `parse_grades`."""

    def read(data: Any) -> list[tuple[int, str] | None]:
        if isinstance(data, dict):
            inner = data.get("grades", data.get("results", data.get("passages")))
            data = inner if isinstance(inner, list) else [data] if "grade" in data else None
        if not isinstance(data, list):
            raise ParseError('expected an object with a "grades" list')
        found: dict[int, tuple[int, str]] = {}
        for position, item in enumerate(data, 1):
            if not isinstance(item, dict):
                raise ParseError(f"item {position} of \"grades\" is not an object")
            label = str(item.get("passage", f"P{position}")).strip().upper().lstrip("[").rstrip("]")
            m = re.fullmatch(r"P?\s*(\d+)", label)
            if not m:
                raise ParseError(f"item {position}: unknown passage label {label!r}")
            index = int(m.group(1))
            if not 1 <= index <= n_passages:
                raise ParseError(f"a grade for passage P{index}, which was not given (P1 to P{n_passages} were)")
            grade = item.get("grade")
            if isinstance(grade, str) and grade.strip().isdigit():
                grade = int(grade)
            if isinstance(grade, float) and grade.is_integer():
                grade = int(grade)
            if not isinstance(grade, int) or isinstance(grade, bool) or not 0 <= grade <= max_grade:
                raise ParseError(f"passage P{index}: grade {item.get('grade')!r} is not an integer 0-{max_grade}")
            if index in found and found[index][0] != grade:
                raise ParseError(f"passage P{index} has two different grades ({found[index][0]} and {grade}); "
                                 "give each passage one grade")
            found.setdefault(index, (grade, str(item.get("reason", "")).strip()))
        if not found:
            raise ParseError("no passage is graded")
        return [found.get(i) for i in range(1, n_passages + 1)]

    return read


def parse_grades(text: str, n_passages: int, max_grade: int = 3) -> list[tuple[int, str] | None]:
    """(grade, reason) per passage from a model's reply, None for a passage the reply left out.

    The reply's final answer is used (`trecbench.llm.parse.final_answer`); ParseError when no passage is
    graded, a grade is invalid, a passage gets two different grades, or an unknown passage is named.
    """
    return final_answer(text, grades_reader(n_passages, max_grade))
