"""Scoring, in three families that share per-topic tables and significance tests.

- `retrieval/`: runs against qrels with trec_eval's exact numbers (engine, rankings, measure names,
  trec_eval's measures, the ir_measures-only extras, printing, comparison with a trec_eval output).
- `answers/`: answers against nuggets (nugget assignment in `answers/assign/`, then V_strict, V, A, W).
- `evidence/`: staged contexts against evidence (EvidenceRecall, CompleteEvidence, the funnel) and context
  recall, with the files they read (evidence, permissions, references, contexts) and duplicate groups.
- shared: `topic_scores` (per-topic tables), `significance` (paired tests), `textmatch` (offline matching).
"""
from trecbench.evaluation.retrieval.frames import DEFAULT_MEASURES, evaluate, score_runs, to_frame

__all__ = ["DEFAULT_MEASURES", "evaluate", "score_runs", "to_frame"]
