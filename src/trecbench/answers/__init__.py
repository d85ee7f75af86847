"""Answer files of RAG systems (TREC RAG 2024 and 2025 JSONL): read and validate."""
from trecbench.answers.trec import (
    MAX_REFERENCES,
    MAX_WORDS,
    Answer,
    AnswerSentence,
    answers_by_run,
    check_answers,
    read_answers,
    validate_answers,
)

__all__ = ["MAX_REFERENCES", "MAX_WORDS", "Answer", "AnswerSentence", "answers_by_run", "check_answers",
           "read_answers", "validate_answers"]
