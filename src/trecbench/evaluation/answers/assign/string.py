"""String assigner (offline): normalised Levenshtein similarity of a nugget to windows of answer sentences.

Each nugget is compared, after lower-casing and dropping punctuation, with every window of 1 to
`window` consecutive answer sentences; the best similarity decides: `support` when it is above
`threshold`, `partial_support` when above `partial_threshold`, else `not_support`. A crude, fully
reproducible baseline: it rewards wording close to the nugget's and cannot see meaning (a negated
sentence scores almost as high as the original).
"""
from __future__ import annotations

from trecbench.evaluation.answers.assign import NOT, PARTIAL, SUPPORT, NuggetAssignment, TopicAssignment
from trecbench.evaluation.textmatch import best_match, normalise, split_sentences


class StringAssigner:
    """Best normalised Levenshtein similarity over answer sentence windows, against two thresholds."""

    name = "string"

    def __init__(self, threshold: float = 0.7, partial_threshold: float = 0.5, window: int = 2):
        if not 0.0 <= partial_threshold <= threshold < 1.0:
            raise ValueError("need 0 <= partial_threshold <= threshold < 1")
        self.threshold = threshold
        self.partial_threshold = partial_threshold
        self.window = max(1, window)

    def assign(self, pairs) -> list[TopicAssignment]:
        return [self.assign_one(answer, topic) for answer, topic in pairs]

    def windows(self, answer) -> list[str]:
        sentences = [normalise(p) for s in answer.sentences for p in split_sentences(s.text)]
        sentences = [s for s in sentences if s]
        out: list[str] = []
        for width in range(1, self.window + 1):
            out.extend(" ".join(sentences[i:i + width]) for i in range(len(sentences) - width + 1))
        return out

    def assign_one(self, answer, topic) -> TopicAssignment:
        windows = self.windows(answer)
        out = []
        for nugget in topic.nuggets:
            score, at = best_match(normalise(nugget.text), windows)
            if score > self.threshold:
                label = SUPPORT
            elif score > self.partial_threshold:
                label = PARTIAL
            else:
                label = NOT
            reason = f"best similarity {score:.3f}" + (f" to {windows[at][:60]!r}" if at >= 0 else " (empty answer)")
            out.append(NuggetAssignment(nugget.id, nugget.text, nugget.importance, label, reason))
        return TopicAssignment(answer.run_id, topic.qid, tuple(out))
