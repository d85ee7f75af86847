"""Reading model replies: JSON found inside prose, code fences or reasoning, and the re-ask message.

A parser is any function `parse(text) -> value` that raises `ParseError(reason)` when the reply cannot be
used; `LLM.ask` then re-asks with `reask_messages(reply, reason)` and finally records the failure.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from trecbench.llm.errors import ParseError

__all__ = ["ParseError", "extract_json", "json_object", "json_list", "reask_messages", "Parser"]

Parser = Callable[[str], Any]

_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON|javascript|js)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()
_MISSING = object()
_MAX_STARTS = 64  # bracket positions tried in one reply; bounds the work on long prose

_KIND = {dict: "a JSON object", list: "a JSON list"}


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON list"
    return f"the bare value {json.dumps(value)[:40]}"


def _unclosed(text: str, start: int) -> bool:
    """True when the brackets opened at `start` are still open at the end of `text` (a cut-off reply)."""
    depth, in_string, escaped = 0, False, False
    for ch in text[start:]:
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
                return False
    return depth > 0


def _looks_like_json(text: str, start: int) -> bool:
    """True when the bracket at `start` is followed by what JSON would put there (not prose like `{ is`)."""
    rest = text[start + 1:].lstrip()
    return not rest or rest[0] in '"{[]}-0123456789'


def _accepts(value: Any, expect: type | None) -> bool:
    if expect is None:
        return isinstance(value, (dict, list))
    return isinstance(value, expect)


def extract_json(text: str | None, *, expect: type | None = None) -> Any:
    """The first JSON object or list in a model reply, wherever it sits; `expect=dict` or `list` narrows it.

    Tried in order: the whole reply; each ``` fenced block (```json or bare); then every `{` or `[` in the
    text, decoding one value from there and ignoring what follows. `<think>` blocks are skipped. Raises
    ParseError saying whether the reply was empty, cut off before its JSON closed, of the wrong kind, or
    held no JSON at all.
    """
    if text is None or not text.strip():
        raise ParseError("the reply is empty")
    body = _THINK.sub("", text).strip()
    wrong_kind: Any = _MISSING

    try:
        value = json.loads(body)
    except ValueError:
        pass
    else:
        if _accepts(value, expect):
            return value
        wrong_kind = value

    pieces = [m.group(1).strip() for m in _FENCE.finditer(body)]
    cut_off = False
    for piece in pieces + [body]:
        starts = [i for i, ch in enumerate(piece) if ch in "{["][:_MAX_STARTS]
        for i in starts:
            try:
                value, _ = _DECODER.raw_decode(piece, i)
            except ValueError:
                if _looks_like_json(piece, i) and _unclosed(piece, i):
                    # JSON that starts here and never closes: whatever lies inside it (one nugget of a
                    # cut-off list, say) is a fragment, not the answer.
                    cut_off = True
                    break
                continue
            if _accepts(value, expect):
                return value
            if wrong_kind is _MISSING:
                wrong_kind = value
    if not pieces:
        # An opening fence with no closing one is a reply cut off inside its code block.
        fence = body.find("```")
        if fence >= 0 and any(ch in "{[" for ch in body[fence:]):
            cut_off = True
    if cut_off:
        return _raise("the JSON is cut off before it closes (the reply was probably truncated)")
    if wrong_kind is not _MISSING:
        wanted = _KIND.get(expect, "a JSON object or list") if expect else "a JSON object or list"
        return _raise(f"expected {wanted}, found {_describe(wrong_kind)}")
    return _raise("no JSON found in the reply")


def _raise(reason: str) -> Any:
    raise ParseError(reason)


def json_object(*required: str) -> Parser:
    """A parser returning the reply's JSON object, which must have every key in `required`."""

    def parse(text: str) -> dict:
        obj = extract_json(text, expect=dict)
        missing = [k for k in required if k not in obj]
        if missing:
            raise ParseError("the JSON object has no " + ", ".join(repr(k) for k in missing))
        return obj

    return parse


def json_list() -> Parser:
    """A parser returning the reply's JSON list."""
    return lambda text: extract_json(text, expect=list)


def reask_messages(reply: str | None, reason: str) -> list[dict]:
    """The two turns appended before asking again: the unusable reply, then what was wrong with it."""
    return [
        {"role": "assistant", "content": reply or ""},
        {"role": "user", "content": (
            f"That reply could not be used: {reason}. Answer the same request again, in exactly the format "
            "it asks for, complete, with nothing before or after it.")},
    ]
