"""The support-judging prompt: does a cited passage back one sentence of an answer, on the support grades.

Kept like the other tasks of `trecbench.llm.prompts` (a `TaskPrompt`: instructions, a reply format written
with `<placeholders>`, the answer's JSON schema, a reply bound), one text per grade scale: the TREC 2024 RAG
Track's three grades (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus
LLM Judges", SIGIR 2025: full, partial and no support), or those and `contradicts` (BioGen 2025). The words
are ours; each grade's definition is `answers.support.DEFINITIONS`, the text people see on the assessor page.
The prompt's name and the sha256 of its text are part of the model judge's name, so a changed word
is a new judge.
"""
from __future__ import annotations

from typing import Sequence

from trecbench.answers.support import DEFINITIONS
from trecbench.llm.prompts import TaskPrompt

_NO_CONTRADICTS = ("A passage that says the opposite of the sentence gives it no support: grade it none.")


def prompt_name(grades: Sequence[str]) -> str:
    """The prompt's name on this scale: `support` (full, partial, none), `support-contradicts` with the fourth."""
    return "support-contradicts" if "contradicts" in grades else "support"


def support_prompt(grades: Sequence[str]) -> TaskPrompt:
    """The support-judging task on `grades` (full, partial, none, and optionally contradicts, in that order)."""
    unknown = [g for g in grades if g not in DEFINITIONS]
    if unknown:
        raise ValueError(f"unknown support grade(s): {', '.join(unknown)} (known: {', '.join(DEFINITIONS)})")
    scale = "\n".join(f"{g} - {DEFINITIONS[g]}" for g in grades)
    listed = ", ".join(grades[:-1]) + " or " + grades[-1]
    closing = "" if "contradicts" in grades else "\n" + _NO_CONTRADICTS
    return TaskPrompt(
        prompt_name(grades),
        """You are checking the citations of an answer written by a search system. You are given one \
sentence of the answer and one passage the sentence cites. Decide how far the passage backs what the \
sentence says, on this scale:

""" + scale + """

Read the sentence as a set of claims and look for each one in the passage. Judge only from what the \
passage says, not from what you know or from whether the sentence is true; the question is given only so \
that the sentence can be understood.""" + closing,
        """Reply with JSON only, an object of this shape, where <...> marks what you fill in:
{"grade": "<""" + listed + """>", "reason": "<why, in a few words>"}""",
        {"type": "object", "properties": {"grade": {"type": "string", "enum": list(grades)},
                                          "reason": {"type": "string"}},
         "required": ["grade", "reason"], "additionalProperties": False},
        base_tokens=64, tokens_per_item=64,
    )
