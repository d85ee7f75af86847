"""Support assessment's scores: does what an answer says stand on the passages it cites?

`scoring` holds the rule that picks one grade per sentence-citation pair from the judgments of many judges
(`chosen_grades`; the model judge, agreement and the web app use it too) and the measures: weighted support
precision and recall (Thakur et al., SIGIR 2025), the share of unsupported sentences and of contradicting
citations, per run and topic, micro and macro.
"""
from trecbench.evaluation.support.jsonl import export_support, import_support, read_support_rows
from trecbench.evaluation.support.scoring import (
    AnswerSupport,
    ChosenGrade,
    SupportScores,
    answer_support,
    chosen_grades,
    chosen_judgments,
    evaluate_support,
    score_support,
    sentence_support,
)

__all__ = ["AnswerSupport", "ChosenGrade", "SupportScores", "answer_support", "chosen_grades", "chosen_judgments",
           "evaluate_support", "export_support", "import_support", "read_support_rows", "score_support",
           "sentence_support"]
