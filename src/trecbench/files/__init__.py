"""Bytes in and out: the plumbing under every reader and writer of trecbench's files.

columns (clean TREC files split into numpy columns, no Python object per line: the one fast path of
every TREC reader), trec (pandas' parser and the exact line-by-line TREC fields that columns falls back to),
lines (lines and JSONL records with gzip, offsets and UTF-8 problems), output (atomic output files),
irds (`irds:` sources through ir_datasets).
"""
