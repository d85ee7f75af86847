"""Evidence and contexts: did retrieval bring back what an answer needs, and where was it lost?

recall (EvidenceRecall@k / @N tokens, CompleteEvidence, the stage funnel), context_recall (by ids,
strings or a model), contexts (staged contexts files, the top k rule), files (evidence, nuggets as
evidence, permissions), references (context-recall references), duplicates (a duplicate group is one
document), jsonl (the line checks these JSONL readers share).
"""
