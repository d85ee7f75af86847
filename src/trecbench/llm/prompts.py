"""Every prompt trecbench sends, one entry per task: relevance, drafting, importance, assignment, claims.

Each task has its instructions, the reply format (written with `<placeholders>`, never with values a
model could copy as an answer: `trecbench.llm.parse` treats a placeholder in a reply as an echoed
example), the JSON schema of its answer (sent as structured output where the server enforces one), and
a bound on the reply's length in tokens (`max_tokens`), per item for tasks that answer for several.

The task modules build messages from these texts and read replies with `trecbench.llm.parse`; the
texts' hashes are recorded with the judgments and drafts they produce, so a changed word is a new setting.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

__all__ = ["TaskPrompt", "Level", "Scale", "DEFAULT_SCALE", "relevance_prompt", "RELEVANCE", "RELEVANCE_MULTI_CRITERIA", "DRAFTING", "IMPORTANCE", "ASSIGNMENT", "CLAIMS", "TASKS", "clip",
           "PASSAGE_CHARS"]

PASSAGE_CHARS = 6000  # a passage is cut to this many characters in a prompt


def clip(text: str, limit: int = PASSAGE_CHARS) -> str:
    """A passage as a prompt shows it: whitespace collapsed, cut at `limit` characters (marked " ...")."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


@dataclass(frozen=True)
class TaskPrompt:
    """One task's texts, answer schema and reply bound: `max_tokens(n)` for an answer about n items."""

    name: str
    instructions: str
    reply_format: str
    schema: Mapping[str, Any] = field(repr=False)
    base_tokens: int = 64
    tokens_per_item: int = 64
    most_tokens: int = 8192

    def max_tokens(self, items: int = 1) -> int:
        """A reply bound that fits the answer about `items` items with room to spare, never the whole context."""
        return min(self.most_tokens, self.base_tokens + self.tokens_per_item * max(1, items))

    def response_schema(self) -> dict[str, Any]:
        """The `json_schema` member of an OpenAI-style `response_format` for this task's answer."""
        return {"name": self.name, "schema": dict(self.schema), "strict": False}

    @property
    def sha256(self) -> str:
        return hashlib.sha256((self.instructions + "\n" + self.reply_format).encode("utf-8")).hexdigest()


def _obj(properties: Mapping[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required or list(properties),
            "additionalProperties": False}


def _list_of(item: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": dict(item)}


_TEXT = {"type": "string"}

class Level(NamedTuple):
    """One grade of a relevance scale: its number, its short name (the judging page's button) and its
    definition (what the model and the people judging are told it means)."""

    grade: int
    name: str
    definition: str


@dataclass(frozen=True)
class Scale:
    """The relevance scale of a workspace: its levels (grades 0, 1, ... in order), the lowest grade that
    counts as relevant, and an optional narrative said before the levels. One record read by the judging
    page, the model's prompt, validation and qrels (`trecbench.toml`'s `[scale]`; `DEFAULT_SCALE` without)."""

    levels: tuple[Level, ...]
    relevant: int = 1
    narrative: str = ""

    @property
    def max_grade(self) -> int:
        return self.levels[-1].grade

    @property
    def names(self) -> dict[int, str]:
        """{grade: name}, lowest grade first."""
        return {level.grade: level.name for level in self.levels}

    def definitions(self) -> str:
        """The levels as the model's prompt lists them: `3 - definition`, highest grade first."""
        return "\n".join(f"{level.grade} - {level.definition}" for level in reversed(self.levels))

    def grade_list(self) -> str:
        """The grades in words: `0, 1, 2 or 3`."""
        grades = [str(level.grade) for level in self.levels]
        return ", ".join(grades[:-1]) + " or " + grades[-1] if len(grades) > 1 else grades[0]


DEFAULT_SCALE = Scale((
    Level(0, "not relevant", "the passage has nothing to do with the question."),
    Level(1, "related", "the passage is about the subject of the question but does not answer it."),
    Level(2, "highly relevant", "the passage answers the question in part, or the answer is present but buried among "
                                "other material."),
    Level(3, "perfectly relevant", "the passage is devoted to the question and states the exact answer."),
))


def relevance_prompt(scale: Scale = DEFAULT_SCALE) -> TaskPrompt:
    """The relevance-judging task on `scale`: the default scale gives `RELEVANCE`, word for word (its hash is
    part of every model judge's name)."""
    narrative = scale.narrative.strip() + "\n\n" if scale.narrative.strip() else ""
    grades = [level.grade for level in scale.levels]
    return TaskPrompt(
        "relevance",
        """You are assessing search results for a test collection. For each passage, decide how well it \
answers the question, on this scale:

""" + narrative + scale.definitions() + """

Judge only from what the passage says, not from what you know. A passage that merely repeats words of the \
question without answering it is a 1 at most.""",
        """Reply with JSON only: an object whose "grades" list has one entry per passage, in the order given. \
The shape, where <...> marks what you fill in:
{"grades": [{"passage": "<passage label, e.g. P1>", "grade": <""" + scale.grade_list() + """>, \
"reason": "<why, in a few words>"}]}""",
        _obj({"grades": _list_of(_obj({"passage": _TEXT, "grade": {"type": "integer", "enum": grades},
                                       "reason": _TEXT}))}),
        base_tokens=48, tokens_per_item=72,
    )


RELEVANCE = relevance_prompt(DEFAULT_SCALE)

# The `multi-criteria` judging prompt: RELEVANCE's task and reply, with four questions asked before the grade.
RELEVANCE_MULTI_CRITERIA = """You are assessing search results for a test collection. Before you grade a passage, \
weigh four questions about it, each on its own:

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

DRAFTING = TaskPrompt(
    "drafting",
    """You are writing the answer key of a question-answering benchmark. The key is a list of \
nuggets: short facts that a complete, correct answer to the question would state.

A good nugget:
- states exactly one fact (atomic): split "X does A and B" into two nuggets;
- is short (about 3 to 15 words) and can be understood without the passages;
- is stated by the passages and bears on the question; leave out background that does not help answer it;
- is not a rewording of another nugget in the list.

You are given the list built from earlier passages (N1, N2, ...) and new passages (P1, P2, ...). Return \
the whole updated list: keep the earlier nuggets, make one more precise when the new passages warrant it, \
merge two that say the same thing, and add the facts the new passages bring. Drop an earlier nugget only \
when it is merged into another. The list holds at most {max_nuggets} nuggets; when it is full, keep the \
ones that matter most for answering the question.""",
    """Reply with JSON only, an object of this shape, where <...> marks what you fill in:
{"nuggets": [{"from": [<labels of the earlier nuggets it keeps or merges, e.g. "N2">], "text": "<the fact>", \
"support": [<labels of the new passages that state it, e.g. "P1">]}]}
"from" is an empty list for a new nugget; "support" is an empty list when none of the new passages \
states the nugget.""",
    _obj({"nuggets": _list_of(_obj({"from": _list_of(_TEXT), "text": _TEXT, "support": _list_of(_TEXT)}))}),
    base_tokens=64, tokens_per_item=64,
)

IMPORTANCE = TaskPrompt(
    "importance",
    """You are deciding how important each nugget (a short fact) is for answering a question.

vital - a good answer must state it: without it the answer is incomplete or misleading.
okay - worth stating, but an answer can be good without it.

Judge each nugget by what the question asks, not by how interesting the fact is.""",
    """Reply with JSON only: an object whose "labels" list has one entry per nugget, in the order given. \
The shape, where <...> marks what you fill in:
{"labels": [{"nugget": "<nugget label, e.g. N1>", "importance": "<vital or okay>"}]}""",
    _obj({"labels": _list_of(_obj({"nugget": _TEXT, "importance": {"type": "string", "enum": ["vital", "okay"]}}))}),
    base_tokens=32, tokens_per_item=24,
)

ASSIGNMENT = TaskPrompt(
    "assignment",
    """You check written answers against a list of facts ("nuggets") that a good answer to the \
question should state. For each nugget, decide how well the answer states it:
- "support": the answer states the fact fully (in any wording).
- "partial_support": the answer states part of the fact, or states it vaguely or with less precision.
- "not_support": the answer does not state the fact, or says something that contradicts it.
Judge only what the answer says; do not use outside knowledge, and do not give credit for facts that \
are merely consistent with the answer.""",
    """Reply with JSON only: an object holding exactly {n} labels in its "labels" list, one per nugget in \
the order listed. The shape, where <...> marks what you fill in:
{{"labels": ["<support, partial_support or not_support>"]}}""",
    _obj({"labels": _list_of({"type": "string", "enum": ["support", "partial_support", "not_support"]})}),
    base_tokens=32, tokens_per_item=12,
)

CLAIMS = TaskPrompt(
    "claims",
    """You check whether retrieved passages contain the information of a reference answer. \
First split the reference answer into its claims: short, self-contained statements of one fact each, \
covering everything it says. Then, for each claim, decide whether the numbered passages support it: \
"attributed" is true only when the passages state the claim (or something that plainly entails it); \
list the numbers of the passages that do, and give a one-sentence reason. Use only the passages, not \
outside knowledge.""",
    """Reply with JSON only, an object of this shape, where <...> marks what you fill in:
{{"claims": [{{"claim": "<one fact of the reference answer>", "attributed": <true or false>, \
"passages": [<numbers of the passages stating it, from 1 to {n}>], "reason": "<why, in one sentence>"}}]}}
"passages" is an empty list when "attributed" is false.""",
    _obj({"claims": _list_of(_obj({"claim": _TEXT, "attributed": {"type": "boolean"},
                                   "passages": _list_of({"type": "integer"}), "reason": _TEXT}))}),
    base_tokens=96, tokens_per_item=80,
)

TASKS = {t.name: t for t in (RELEVANCE, DRAFTING, IMPORTANCE, ASSIGNMENT, CLAIMS)}
