"""The one reader of model replies: the final answer of the expected shape, wherever it sits in the text.

Every model task (relevance judging, nugget drafting and importance, assignment, claims) reads its
replies through `final_answer(text, read)`:

- reasoning is not an answer: `<think>`/`<thinking>`/`<reasoning>` blocks are dropped (a reply whose
  reasoning never closes has no answer), and a server's separate `reasoning_content` is never read;
- the reply's *top-level* JSON values (objects and lists not nested in another value, in prose, code
  fences or bare) are the candidates; a fragment inside a broken value is never one;
- the candidates are tried from the last to the first, and the first that `read` accepts is the answer:
  a draft, or a restated format example, before the final answer is ignored;
- a value holding a placeholder string (`"<why>"`, the prompts' way of writing examples) is an echo of
  the example, not an answer.

`read(value)` returns the task's answer or raises ParseError(reason); the reason of the last candidate
tells the model what was wrong when it is asked again (`reask_messages`).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, TypeVar

from trecbench.llm.errors import ParseError

__all__ = ["ParseError", "final_answer", "json_values", "extract_json", "json_object", "json_list",
           "reask_messages", "strip_reasoning", "Parser"]

Parser = Callable[[str], Any]
T = TypeVar("T")

_TAGS = "think|thinking|reasoning"
_BLOCK = re.compile(rf"<({_TAGS})>.*?</\1>", re.DOTALL | re.IGNORECASE)
_CLOSE = re.compile(rf"</(?:{_TAGS})>", re.IGNORECASE)
_OPEN = re.compile(rf"<(?:{_TAGS})>", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\s*<[^<>]+>\s*$")
_DECODER = json.JSONDecoder()
_MAX_VALUES = 64  # top-level values read from one reply; bounds the work on long prose


def strip_reasoning(text: str) -> str:
    """The reply without its reasoning: closed blocks removed, and an unclosed one cut to the end.

    A close tag with no opening one (servers that send the opening tag elsewhere) drops what precedes it.
    """
    text = _BLOCK.sub("", text)
    closes = list(_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _OPEN.search(text)
    return text[:opened.start()] if opened else text


def _matching_close(text: str, start: int) -> int | None:
    """Index just past the bracket closing the one at `start` (strings respected), or None if it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _looks_like_json(text: str, start: int) -> bool:
    """True when the bracket at `start` is followed by what JSON would put there (not prose like `{ is`)."""
    rest = text[start + 1:].lstrip()
    return not rest or rest[0] in '"{[]}-0123456789'


def json_values(text: str | None) -> tuple[list[Any], bool]:
    """(the reply's top-level JSON objects and lists in reading order, whether one was cut off unclosed).

    Reasoning is removed first. A bracket whose value does not decode is skipped with everything up
    to its closing bracket, so nothing nested in a broken value is ever taken for an answer.
    """
    body = strip_reasoning(text or "")
    values: list[Any] = []
    i, n = 0, len(body)
    while i < n and len(values) < _MAX_VALUES:
        if body[i] not in "{[":
            i += 1
            continue
        try:
            value, end = _DECODER.raw_decode(body, i)
        except ValueError:
            close = _matching_close(body, i)
            if close is None:
                if _looks_like_json(body, i):
                    return values, True  # JSON that starts here and never closes: the reply was cut off
                i += 1
                continue
            i = close
            continue
        values.append(value)
        i = end
    return values, False


def is_placeholder(value: Any) -> bool:
    """True when a JSON value holds a `<...>` placeholder string: the format example, echoed."""
    if isinstance(value, str):
        return bool(_PLACEHOLDER.match(value))
    if isinstance(value, dict):
        return any(is_placeholder(k) or is_placeholder(v) for k, v in value.items())
    if isinstance(value, list):
        return any(is_placeholder(v) for v in value)
    return False


def final_answer(text: str | None, read: Callable[[Any], T]) -> T:
    """The last top-level JSON value of the reply that `read` accepts, read; ParseError when none does."""
    if text is None or not text.strip():
        raise ParseError("the reply is empty")
    if not strip_reasoning(text).strip():
        raise ParseError("the reply holds reasoning only, no answer after it")
    values, cut_off = json_values(text)
    reason = ""
    echoed = False
    for value in reversed(values):
        if is_placeholder(value):
            echoed = True
            continue
        try:
            return read(value)
        except ParseError as exc:
            reason = reason or exc.reason
    if reason:
        raise ParseError(reason)
    if cut_off:
        raise ParseError("the JSON is cut off before it closes (the reply was probably truncated)")
    if echoed:
        raise ParseError("the reply repeats the format example instead of answering; fill in real values")
    raise ParseError("no JSON object or list found in the reply")


def _kind(expect: type | None) -> Callable[[Any], Any]:
    wanted = "a JSON object" if expect is dict else "a JSON list" if expect is list else "a JSON object or list"

    def read(value: Any) -> Any:
        if expect is not None and not isinstance(value, expect):
            found = "a JSON object" if isinstance(value, dict) else "a JSON list"
            raise ParseError(f"expected {wanted}, found {found}")
        return value

    return read


def extract_json(text: str | None, *, expect: type | None = None) -> Any:
    """The reply's final top-level JSON object or list (`expect=dict` or `list` narrows it); see final_answer."""
    if text is not None and text.strip():
        try:
            whole = json.loads(strip_reasoning(text))
        except ValueError:
            pass
        else:
            if not isinstance(whole, (dict, list)):
                raise ParseError(f"expected {'a JSON object' if expect is dict else 'a JSON object or list'}, "
                                 f"found the bare value {json.dumps(whole)[:40]}")
    return final_answer(text, _kind(expect))


def json_object(*required: str) -> Parser:
    """A parser returning the reply's final JSON object that has every key in `required`."""

    def read(value: Any) -> dict:
        if not isinstance(value, dict):
            raise ParseError("expected a JSON object, found a JSON list")
        missing = [k for k in required if k not in value]
        if missing:
            raise ParseError("the JSON object has no " + ", ".join(repr(k) for k in missing))
        return value

    return lambda text: final_answer(text, read)


def json_list() -> Parser:
    """A parser returning the reply's final JSON list."""
    return lambda text: final_answer(text, _kind(list))


def reask_messages(reply: str | None, reason: str) -> list[dict]:
    """The two turns appended before asking again: the unusable reply, then what was wrong with it."""
    return [
        {"role": "assistant", "content": reply or ""},
        {"role": "user", "content": (
            f"That reply could not be used: {reason}. Answer the same request again, in exactly the format "
            "it asks for, complete, with nothing before or after it.")},
    ]
