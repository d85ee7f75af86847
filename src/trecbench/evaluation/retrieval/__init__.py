"""Retrieval scores identical to trec_eval 9.0.8 or 10.0: `frames.evaluate` is the entry point.

engine (score one run: topics, depth, relevance level, `-c`), rankings (trec_eval's rankings as arrays),
names (ir-measures and trec_eval measure names), measures/ (trec_eval's measure families), extras
(Judged@k, RR@k: ir-measures' measures trec_eval lacks), output (trec_eval's text, tables, CSV, JSON),
against (our numbers beside a saved trec_eval output).
"""
