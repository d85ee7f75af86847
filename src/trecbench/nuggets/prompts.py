"""Messages for drafting nuggets with a model, and the readers of their replies (texts: `trecbench.llm.prompts`).

Two questions are asked, following the AutoNuggetizer procedure:

- *update*: given the topic, the running list of nuggets so far (N1, N2, ...) and a window of relevant
  passages (P1, P2, ...), return the updated list; each nugget says which earlier nuggets it continues
  (`from`) and which passages of this window state it (`support`);
- *label*: given the topic and up to ten nuggets, say which are vital and which okay.

A reply that breaks the format raises ParseError with a reason the model is told when re-asked.
The prompts' sha256 is recorded with every drafting run, so a changed word is a different drafter setting.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from trecbench.llm.errors import ParseError
from trecbench.llm.parse import final_answer
from trecbench.llm.prompts import DRAFTING, IMPORTANCE, clip

UPDATE_INSTRUCTIONS = DRAFTING.instructions
UPDATE_FORMAT = DRAFTING.reply_format
LABEL_INSTRUCTIONS = IMPORTANCE.instructions
LABEL_FORMAT = IMPORTANCE.reply_format



def prompts_sha256() -> str:
    """The hash of every instruction text (recorded with each drafting run)."""
    text = "\n".join([UPDATE_INSTRUCTIONS, UPDATE_FORMAT, LABEL_INSTRUCTIONS, LABEL_FORMAT])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Updated:
    """One nugget of an updated list: its text, the earlier nuggets it continues and this window's passages."""

    text: str
    sources: tuple[int, ...]  # 0-based indexes into the earlier list
    passages: tuple[int, ...]  # 0-based indexes into the window


def update_messages(question: str, narrative: str | None, nuggets: list[str], passages: list[str],
                    max_nuggets: int) -> list[dict]:
    """Messages asking the model to update the running list `nuggets` with the window `passages`."""
    system = UPDATE_INSTRUCTIONS.format(max_nuggets=max_nuggets) + "\n\n" + UPDATE_FORMAT
    parts = [f"Question: {question}"]
    if narrative:
        parts.append(f"What the asker wants to know: {narrative}")
    if nuggets:
        parts.append("Nuggets so far:\n" + "\n".join(f"N{i}: {t}" for i, t in enumerate(nuggets, 1)))
    else:
        parts.append("Nuggets so far: none yet.")
    parts.append("New passages:\n\n" + "\n\n".join(f"[P{i}] {clip(p)}" for i, p in enumerate(passages, 1)))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def label_messages(question: str, narrative: str | None, nuggets: list[str]) -> list[dict]:
    """Messages asking for vital/okay labels of up to ten `nuggets`."""
    parts = [f"Question: {question}"]
    if narrative:
        parts.append(f"What the asker wants to know: {narrative}")
    parts.append("Nuggets:\n" + "\n".join(f"N{i}: {t}" for i, t in enumerate(nuggets, 1)))
    return [{"role": "system", "content": LABEL_INSTRUCTIONS + "\n\n" + LABEL_FORMAT},
            {"role": "user", "content": "\n\n".join(parts)}]


def update_bound(max_nuggets: int) -> int:
    """`max_tokens` for an updated list of up to `max_nuggets` nuggets."""
    return DRAFTING.max_tokens(max_nuggets)


def label_bound(n_nuggets: int) -> int:
    """`max_tokens` for the labels of `n_nuggets` nuggets."""
    return IMPORTANCE.max_tokens(n_nuggets)


def parse_update(text: str, n_nuggets: int, n_passages: int, max_nuggets: int) -> list[Updated]:
    """The updated list from a reply's final answer (at most `max_nuggets`, in order; later repeats merged).

    Only a top-level object with a "nuggets" list (or a top-level list of nugget objects) is an answer.
    """
    return final_answer(text, lambda value: _read_update(value, n_nuggets, n_passages, max_nuggets))


def _read_update(data, n_nuggets: int, n_passages: int, max_nuggets: int) -> list[Updated]:
    if isinstance(data, dict):
        data = data.get("nuggets")
        if not isinstance(data, list):
            raise ParseError('the JSON object has no "nuggets" list')
    out: list[Updated] = []
    seen: dict[str, int] = {}
    for k, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise ParseError(f'nugget {k} is not an object with "from", "text" and "support"')
        body = item.get("text")
        if not isinstance(body, str) or not body.strip():
            raise ParseError(f'nugget {k} has no "text"')
        sources = _labels(item.get("from", []), "N", n_nuggets, f"nugget {k}", "from")
        passages = _labels(item.get("support", []), "P", n_passages, f"nugget {k}", "support")
        body = " ".join(body.split())
        key = body.casefold()
        if key in seen:  # the same text twice: one nugget, with both sets of sources and passages
            j = seen[key]
            prev = out[j]
            out[j] = Updated(prev.text, _union(prev.sources, sources), _union(prev.passages, passages))
            continue
        seen[key] = len(out)
        out.append(Updated(body, sources, passages))
    return out[:max_nuggets]


def parse_labels(text: str, n_nuggets: int) -> list[str]:
    """One of vital/okay per nugget, in order, from the reply's final answer; each nugget labelled once."""
    return final_answer(text, lambda value: _read_labels(value, n_nuggets))


def _read_labels(data, n_nuggets: int) -> list[str]:
    if isinstance(data, dict):
        data = data.get("labels") or data.get("nuggets") or data.get("importance")
        if not isinstance(data, list):
            raise ParseError("expected a JSON list of {nugget, importance} objects")
    labels: dict[int, str] = {}
    for k, item in enumerate(data, 1):
        if isinstance(item, str):
            item = {"nugget": f"N{k}", "importance": item}
        if not isinstance(item, dict):
            raise ParseError(f"item {k} is not an object")
        [index] = _labels([item.get("nugget", f"N{k}")], "N", n_nuggets, f"item {k}", "nugget")
        value = str(item.get("importance", "")).strip().lower()
        if value not in ("vital", "okay"):
            raise ParseError(f'item {k}: importance must be "vital" or "okay", not {item.get("importance")!r}')
        if index in labels and labels[index] != value:
            raise ParseError(f"N{index + 1} is labelled twice, {labels[index]} and {value}; give each nugget one label")
        labels[index] = value
    missing = [f"N{i + 1}" for i in range(n_nuggets) if i not in labels]
    if missing:
        raise ParseError("no label for " + ", ".join(missing))
    return [labels[i] for i in range(n_nuggets)]


_LABEL = re.compile(r"\[?\s*([A-Za-z]*)\s*(\d+)\s*\]?")


def _labels(value, prefix: str, limit: int, where: str, key: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise ParseError(f'{where}: "{key}" must be a list of labels like "{prefix}1"')
    out: list[int] = []
    for v in value:
        m = _LABEL.fullmatch(str(v).strip())
        if not m or (m.group(1) and m.group(1).upper() != prefix):
            raise ParseError(f'{where}: {v!r} in "{key}" is not a label like "{prefix}1"')
        i = int(m.group(2))
        if not 1 <= i <= limit:
            there = f"{prefix}1 to {prefix}{limit}" if limit else f"no {prefix} labels"
            raise ParseError(f'{where}: "{key}" names {prefix}{i}, but there are {there}')
        if i - 1 not in out:
            out.append(i - 1)
    return tuple(out)


def _union(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(a + b))

