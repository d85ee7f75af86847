"""The relevance-judging prompt (its text lives in `trecbench.llm.prompts`): the workspace's scale (0-3 by
default, `trecbench.llm.prompts.Scale`), several passages per call.

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
from trecbench.llm.prompts import DEFAULT_SCALE, RELEVANCE, RELEVANCE_MULTI_CRITERIA, Scale, clip, relevance_prompt

GRADED_0_3 = RELEVANCE.instructions
MULTI_CRITERIA = RELEVANCE_MULTI_CRITERIA
REPLY_FORMAT = RELEVANCE.reply_format


@dataclass(frozen=True)
class Prompt:
    """Instructions for grading on `scale` (whose reply format and answer schema are appended and sent)."""

    name: str
    instructions: str
    max_grade: int = 3
    scale: Scale = DEFAULT_SCALE

    @property
    def reply_format(self) -> str:
        return REPLY_FORMAT if self.scale == DEFAULT_SCALE else relevance_prompt(self.scale).reply_format

    def response_schema(self) -> dict:
        """The answer's JSON schema (grades of the scale) as `TaskPrompt.response_schema` gives it."""
        return (RELEVANCE if self.scale == DEFAULT_SCALE else relevance_prompt(self.scale)).response_schema()

    @property
    def sha256(self) -> str:
        return hashlib.sha256((self.instructions + "\n" + self.reply_format).encode("utf-8")).hexdigest()


MAX_PROMPT_BYTES = 100_000

BUILTIN = {"graded-0-3": Prompt("graded-0-3", GRADED_0_3), "multi-criteria": Prompt("multi-criteria", MULTI_CRITERIA)}


def scale_prompt(scale: Scale) -> Prompt:
    """The built-in graded prompt on `scale` (`graded-0-3` for the default scale, word for word)."""
    if scale == DEFAULT_SCALE:
        return BUILTIN["graded-0-3"]
    return Prompt(f"graded-{scale.levels[0].grade}-{scale.max_grade}", relevance_prompt(scale).instructions,
                  scale.max_grade, scale)


def load_prompt(spec: str | None, scale: Scale = DEFAULT_SCALE) -> Prompt:
    """A built-in prompt by name, or a text file holding the instructions (the reply format of `scale`, the
    workspace's, is appended). The graded prompt (no `spec`, or `graded-0-3`) is written from `scale`;
    `multi-criteria` is written for the default 0-3 scale and refused on another."""
    if not spec or (spec == "graded-0-3" and scale != DEFAULT_SCALE):
        return scale_prompt(scale)
    if spec in BUILTIN:
        if scale != DEFAULT_SCALE:
            raise InputError(spec, 0, f"the {spec} prompt is written for the 0-3 scale, and this workspace declares "
                                      f"its own ({scale.levels[0].grade}-{scale.max_grade}): use the default prompt "
                                      "or a prompt file")
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
    return Prompt(path.stem, text, scale.max_grade, scale)


@dataclass(frozen=True)
class Example:
    """A judged passage shown to the model before its own passages (few-shot)."""

    question: str
    passage: str
    grade: int


def build_messages(prompt: Prompt, question: str, passages: list[str], *, narrative: str | None = None,
                   examples: Sequence[Example] = ()) -> list[dict]:
    """Chat messages asking for the grades of `passages` (labelled P1, P2, ...) for `question`."""
    system = prompt.instructions + "\n\n" + prompt.reply_format
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
