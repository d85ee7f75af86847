"""Reading TREC files: trecbench's reader against pyarrow's CSV reader and a raw read of the bytes.

Paths measured:
  raw      `open(path, "rb").read()`: the physical floor, no parsing
  split    trecbench's reader (files/columns.py `split_fields`, as `read_run_columns` and
           `read_qrels_columns` give it to evaluation and pooling): ids as uint64 words, scores and
           grades as numpy arrays, the duplicate (topic, docid) check; no Python object per line
  lean     split in the process `eval retrieval` and `pool` run in (helpers/process.py `lean_process`: glibc
           keeps freed arrays for reuse instead of faulting their pages in again every block)
  arrow1   the peer of split: pyarrow's CSV reader on one thread into an Arrow table of the same
           columns (no pandas)
  columns  `read_run` / `read_qrels`' DataFrame from the same split (`_columns_run`, `_columns_qrels`):
           a Python str per docid, as pandas holds strings without pyarrow (runs: pandas' `str`; qrels:
           object, as the other paths give them)
  arrow    pyarrow's multi-threaded CSV reader on one delimiter into the same DataFrame (the reader
           `read_run` used before issue 20; kept here, written out, so the comparison can be repeated)
  pandas   pandas' C parser (`files.trec.fast_table`: the next try for files the split refuses; qrels only)
The trecbench paths run as in a core install, where pyarrow is not installed: their children cannot import
it (pandas then keeps str columns as Python objects). With pyarrow installed, pandas converts read_run's
str columns to Arrow (about 0.3 s more per column of a million ids). The arrow paths import it, as peers.
Inputs: a synthetic run (~50 MB, 6 fields, single spaces, seeded numpy), the real runs of
/work/shared/data/real (12 files), a synthetic qrels file (~20 MB) and the real qrels (6 files).
Every path must give what the shipped reader gives (the DataFrames: dtypes, values, attrs; the columns:
the same values).

Every measurement is its own child process, and the rounds are interleaved: round 1 runs every
(input, path) once, in an order that rotates each round, then round 2, and so on, so a change of
the machine's load falls on every path alike. The child times the read alone with
time.process_time (all its threads' CPU: the arrow path's reader uses both cores); os.wait4 gives the
child's whole CPU (start-up included) and peak RSS. The median of the rounds is printed, with MB per
CPU second and the ratio to the raw read's median CPU; last, the median over rounds of each round's
ratio of split and lean to arrow1 and of columns to arrow, and the load average before and after each round.

    PYTHONPATH=src python benchmarks/read_speed.py [--rounds 5] [--mb 50] [--folder /tmp/trecbench-read-speed]
"""
from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = Path("/work/shared/data/real")
SEED = 20
RUN_PATHS = ["raw", "split", "lean", "arrow1", "columns", "arrow"]
QRELS_PATHS = ["raw", "split", "lean", "arrow1", "columns", "arrow", "pandas"]
CORE_PATHS = {"split", "lean", "columns"}  # trecbench's: measured without pyarrow, as a core install has it


# --- inputs -------------------------------------------------------------------------------------


def make_run(path: Path, megabytes: int) -> None:
    """`qid Q0 docid rank score tag` lines, 1,000 documents per topic, scores with 4 to 17 significant digits."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    docs = 1000
    topics = max(1, megabytes * 1_000_000 // (51 * docs))
    corpus = 8_841_823  # MS MARCO's passages; a stride coprime to it keeps a topic's docids distinct
    start = rng.integers(0, corpus, topics)
    docids = (start[:, None] + np.arange(docs)[None, :] * 104_729) % corpus
    scores = np.sort(rng.gamma(2.0, 4.0, (topics, docs)), axis=1)[:, ::-1]
    with open(path, "w", encoding="ascii") as f:
        for t in range(topics):
            digits = 4 if t % 3 == 0 else (6 if t % 3 == 1 else 0)  # many ties, Anserini's 6 decimals, repr
            text = [f"{s:.{digits}f}" if digits else repr(float(s)) for s in scores[t]]
            qid = 100_000 + t
            f.write("".join(f"{qid} Q0 msmarco_{d} {r} {s} bench-run\n"
                            for r, (d, s) in enumerate(zip(docids[t].tolist(), text), 1)))


def make_qrels(path: Path, megabytes: int) -> None:
    """`qid 0 docid grade` lines, 500 judgments per topic, grades 0-3 (mostly 0)."""
    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    per_topic = 500
    topics = max(1, megabytes * 1_000_000 // (27 * per_topic))
    corpus = 8_841_823
    start = rng.integers(0, corpus, topics)
    docids = (start[:, None] + np.arange(per_topic)[None, :] * 7_919) % corpus
    grades = rng.choice(4, size=(topics, per_topic), p=[0.7, 0.15, 0.1, 0.05])
    with open(path, "w", encoding="ascii") as f:
        for t in range(topics):
            qid = 100_000 + t
            f.write("".join(f"{qid} 0 msmarco_{d} {g}\n" for d, g in zip(docids[t].tolist(), grades[t].tolist())))


def inputs(folder: Path, megabytes: int) -> list[tuple[str, str, list[str]]]:
    """(name, kind, files) of every input, the synthetic ones written once into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    run, qrels = folder / f"run-{megabytes}mb-seed{SEED}.txt", folder / f"qrels-{megabytes * 2 // 5}mb-seed{SEED}.txt"
    if not run.exists():
        make_run(run, megabytes)
    if not qrels.exists():
        make_qrels(qrels, megabytes * 2 // 5)
    real_runs = sorted(str(p) for d in ("rank_llm", "pyserini", "anserini") for p in (REAL / d).glob("*")
                       if "qrels" not in p.name)
    real_qrels = sorted(str(p) for d in ("anserini-tools", "anserini") for p in (REAL / d).glob("qrels*"))
    found = [("synthetic run", "run", [str(run)]), ("synthetic qrels", "qrels", [str(qrels)])]
    if real_runs:
        found.insert(1, (f"real runs ({len(real_runs)} files)", "run", real_runs))
    if real_qrels:
        found.append((f"real qrels ({len(real_qrels)} files)", "qrels", real_qrels))
    return found


# --- the paths ----------------------------------------------------------------------------------


def run_by_columns(data: bytes, path: str):
    from trecbench.runs.trec import _columns_run

    return _columns_run(data, path)


def qrels_by_columns(data: bytes, path: str):
    from trecbench.qrels.trec import _columns_qrels

    return _columns_qrels(data, path)


def run_by_split(data: bytes, path: str):
    from trecbench.evaluation.retrieval.rankings import read_run_columns

    return read_run_columns(path, data)


def qrels_by_split(data: bytes, path: str):
    from trecbench.evaluation.retrieval.rankings import read_qrels_columns

    return read_qrels_columns(path)  # reads the file a block at a time


def arrow_csv(data: bytes, names: list[str], keep: dict[str, str], threads: bool = True):
    """pyarrow's CSV reader on the first line's delimiter (tab, else space) into an Arrow table, or None."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).rstrip(b"\r")
    delim = next((d for d in (b"\t", b" ") if len(first.split(d)) == len(names)
                  and all(p and b" " not in p and b"\t" not in p for p in first.split(d))), None)
    if delim is None:
        return None
    types = {"str": pa.string(), "float64": pa.float64(), "int64": pa.int64()}
    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=threads),
            parse_options=pcsv.ParseOptions(delimiter=delim.decode(), quote_char=False, double_quote=False,
                                            escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(keep), column_types={k: types[v] for k, v in keep.items()},
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[], check_utf8=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or any(table.column(k).null_count for k in keep):
        return None
    return table


def arrow_table(data: bytes, names: list[str], keep: dict[str, str]):
    """pyarrow's CSV reader (all cores) into pandas, as `read_run` used it, or None."""
    import numpy as np

    table = arrow_csv(data, names, keep)
    if table is None:
        return None
    frame = table.to_pandas()
    for name, kind in keep.items():
        if kind == "str" and (frame[name].str.len() == 0).any():
            return None
        if kind == "float64" and not np.isfinite(frame[name].to_numpy()).all():
            return None
    return frame


def clean_text(data: bytes) -> bool:
    from trecbench.files.trec import has_comment_lines

    if b"\x00" in data or b"\x0b" in data or b"\x0c" in data or data.count(b"\r") != data.count(b"\r\n"):
        return False
    if b"#" in data and has_comment_lines(data):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def run_by_arrow(data: bytes, path: str):
    import pandas as pd

    from trecbench.files.trec import has_duplicate_pairs

    if not clean_text(data):
        return None
    table = arrow_table(data, ["qid", "q0", "docid", "rank", "score", "tag"],
                        {"qid": "str", "docid": "str", "score": "float64", "tag": "str"})
    if table is None or has_duplicate_pairs(table["qid"], table["docid"]):
        return None
    frame = pd.DataFrame({"query_id": table["qid"], "doc_id": table["docid"], "score": table["score"]})
    frame.attrs["runid"] = str(table["tag"].iat[-1])
    frame.attrs["path"] = path
    return frame


def qrels_by_arrow(data: bytes, path: str):
    import pandas as pd

    from trecbench.files.trec import has_duplicate_pairs

    if not clean_text(data):
        return None
    table = arrow_table(data, ["qid", "iter", "docid", "grade"],
                        {"qid": "str", "iter": "str", "docid": "str", "grade": "int64"})
    if table is None or has_duplicate_pairs(table["qid"], table["docid"]):
        return None
    frame = pd.DataFrame({"query_id": table["qid"].astype(object), "iteration": table["iter"].astype(object),
                          "doc_id": table["docid"].astype(object), "relevance": table["grade"]})
    frame.attrs["path"] = path
    return frame


RUN_FIELDS = (["qid", "q0", "docid", "rank", "score", "tag"], {"qid": "str", "docid": "str", "score": "float64"})
QRELS_FIELDS = (["qid", "iter", "docid", "grade"], {"qid": "str", "docid": "str", "grade": "int64"})


def run_by_arrow1(data: bytes, path: str):
    return arrow_csv(data, *RUN_FIELDS, threads=False)


def qrels_by_arrow1(data: bytes, path: str):
    return arrow_csv(data, *QRELS_FIELDS, threads=False)


def qrels_by_pandas(data: bytes, path: str):
    from trecbench.qrels.trec import _fast_qrels

    return _fast_qrels(data, path)


READERS = {("run", "columns"): run_by_columns, ("run", "arrow"): run_by_arrow, ("run", "split"): run_by_split,
           ("run", "arrow1"): run_by_arrow1, ("qrels", "columns"): qrels_by_columns, ("qrels", "arrow"): qrels_by_arrow,
           ("qrels", "pandas"): qrels_by_pandas, ("qrels", "split"): qrels_by_split, ("qrels", "arrow1"): qrels_by_arrow1,
           ("run", "lean"): run_by_split, ("qrels", "lean"): qrels_by_split}


def refuse_pyarrow() -> None:
    """Make pyarrow impossible to import in this process, as in a core install (before pandas is imported)."""
    sys.modules["pyarrow"] = None  # type: ignore[assignment]


def child(kind: str, how: str, files: list[str]) -> None:
    """Read every file one way; print the read's CPU seconds, bytes, rows and RSS after the imports."""
    import resource

    if how in CORE_PATHS:
        refuse_pyarrow()
    import numpy  # noqa: F401  (the imports are start-up, not reading: done before the clock starts)
    import pandas  # noqa: F401

    if how not in CORE_PATHS and how != "raw":
        import pyarrow.csv  # noqa: F401
    import trecbench.evaluation.retrieval.rankings  # noqa: F401
    import trecbench.files.columns  # noqa: F401
    import trecbench.qrels.trec  # noqa: F401
    import trecbench.runs.trec  # noqa: F401

    if how == "lean":
        from trecbench.helpers.process import lean_process

        lean_process()
    hwm_before = peak_rss_kib()
    size = rows = 0
    start = time.process_time()
    for name in files:
        with open(name, "rb") as f:
            data = f.read()
        size += len(data)
        if how != "raw":
            frame = READERS[kind, how](data, name)
            if frame is None:
                sys.exit(f"{how} refused {name}")
            rows += len(frame.qid) if hasattr(frame, "qid") else len(frame)  # trecbench's columns, a table, a frame
            del frame
        del data
    cpu = time.process_time() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": cpu, "bytes": size, "rows": rows, "child_cpu": usage.ru_utime + usage.ru_stime,
                      "hwm_before_kib": hwm_before, "hwm_kib": peak_rss_kib()}))


def peak_rss_kib() -> int:
    """This process's peak RSS since its exec (/proc's VmHWM; ru_maxrss keeps the forking parent's)."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


# --- checks and the timing loop -----------------------------------------------------------------


def check_identical(kind: str, files: list[str], hows: list[str]) -> list[str]:
    """The files every path reads, each giving what the shipped reader gives in this process.

    DataFrames must equal the shipped reader's (dtypes, values, attrs); the split's columns and the
    Arrow tables must hold the shipped frame's values. A file some path refuses is named and left out of
    the timing (the shipped reader then falls back); a path that gives something else stops the script.
    """
    import numpy as np
    import pandas as pd

    from trecbench.qrels import read_qrels
    from trecbench.runs import read_run

    kept = []
    for name in files:
        with open(name, "rb") as f:
            data = f.read()
        shipped = read_run(name) if kind == "run" else read_qrels(name)
        values = "score" if kind == "run" else "relevance"
        refused = []
        for how in hows:
            if how == "raw":
                continue
            got = READERS[kind, how](data, name)
            if got is None:
                refused.append(how)
                continue
            if how in ("split", "lean"):
                same = (got.qid.strings() == shipped["query_id"].tolist() and got.doc.strings() == shipped["doc_id"].tolist()
                        and np.array_equal(getattr(got, "score", getattr(got, "grade", None)), shipped[values].to_numpy()))
            elif how == "arrow1":
                same = (got.column("qid").to_pylist() == shipped["query_id"].tolist()
                        and got.column("docid").to_pylist() == shipped["doc_id"].tolist()
                        and np.array_equal(got.column("score" if kind == "run" else "grade").to_numpy(),
                                           shipped[values].to_numpy()))
            else:
                pd.testing.assert_frame_equal(got, shipped, check_exact=True)
                same = got.attrs == shipped.attrs and list(got.dtypes) == list(shipped.dtypes)
            if not same:
                sys.exit(f"{how} gives other values, attrs or dtypes than the shipped reader on {name}")
        if refused:
            print(f"not timed: {name} ({', '.join(refused)} refused it: the shipped reader's fallback reads it)")
        else:
            kept.append(name)
    return kept


def measure(kind: str, how: str, files: list[str]) -> dict:
    """One child: the read's CPU (process_time), the child's whole CPU (os.wait4's rusage) and peak RSS."""
    proc = subprocess.Popen([sys.executable, __file__, "--child", kind, how, *files], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"the {how} child failed on {files[0]}")
    rec = json.loads(out)
    rec["child_cpu"] = usage.ru_utime + usage.ru_stime  # start-up and the read, as the kernel counted them
    rec["peak_mib"] = rec["hwm_kib"] / 1024
    rec["added_mib"] = (rec["hwm_kib"] - rec["hwm_before_kib"]) / 1024
    return rec


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain", "src") else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=int, default=50, help="size of the synthetic run (the qrels get 2/5 of it)")
    ap.add_argument("--folder", default="/tmp/trecbench-read-speed")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--check", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2:])
        return
    if args.check:
        kind, core, *files = args.check
        if core == "core":
            refuse_pyarrow()
        hows = [h for h in (RUN_PATHS if kind == "run" else QRELS_PATHS) if (h in CORE_PATHS) == (core == "core")]
        print(json.dumps(check_identical(kind, files, hows)))
        return
    cases = []
    for name, kind, files in inputs(Path(args.folder), args.mb):
        # in a child, so this process stays small: a child's rusage starts from its parent's peak RSS
        kept = list(files)
        for mode in ("core", "peers"):  # trecbench's paths without pyarrow, as the core has it; the peers with it
            checked = subprocess.run([sys.executable, __file__, "--check", kind, mode, *files], stdout=subprocess.PIPE,
                                     check=True)
            *notes, last = checked.stdout.decode().splitlines()
            for note in notes:
                print(note)
            kept = [f for f in kept if f in json.loads(last)]
        if kept:
            cases.append((name if len(kept) == len(files) else f"{name.split(' (')[0]} ({len(kept)} files)", kind, kept))
    jobs = [(name, kind, how, files) for name, kind, files in cases for how in (RUN_PATHS if kind == "run" else QRELS_PATHS)]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"read_speed: commit {commit()}, {now}, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(f"every path gives the shipped reader's DataFrame on every input; {args.rounds} interleaved rounds")
    loads = [os.getloadavg()[0]]
    results: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        shift = r % len(jobs)
        for name, kind, how, files in jobs[shift:] + jobs[:shift]:  # each round starts one job later
            results.setdefault((name, how), []).append(measure(kind, how, files))
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) before and after each round: {' '.join(f'{x:.2f}' for x in loads)}")
    print()
    print(f"{'input':24} {'path':8} {'MB':>7} {'rows':>9} {'read CPU s':>10} {'min':>7} {'MB/CPU s':>9} "
          f"{'child CPU s':>11} {'peak MiB':>8} {'+MiB':>6} {'x raw':>7}")
    for name, kind, _ in cases:
        raw = median([x["cpu"] for x in results[name, "raw"]])
        for how in RUN_PATHS if kind == "run" else QRELS_PATHS:
            recs = results[name, how]
            cpu = median([x["cpu"] for x in recs])
            mb = recs[0]["bytes"] / 1e6
            print(f"{name:24} {how:8} {mb:7.1f} {recs[0]['rows']:9} {cpu:10.3f} {min(x['cpu'] for x in recs):7.3f} "
                  f"{mb / max(cpu, 1e-9):9.1f} {median([x['child_cpu'] for x in recs]):11.2f} "
                  f"{max(x['peak_mib'] for x in recs):8.0f} {max(x['added_mib'] for x in recs):6.0f} "
                  f"{cpu / max(raw, 1e-9):7.1f}")
    print()
    print("median CPU ratio over the rounds (each round's own ratio; below 1: trecbench is faster):")
    for name, _, _ in cases:
        for ours, peer in (("split", "arrow1"), ("lean", "arrow1"), ("columns", "arrow")):
            ratios = [a["cpu"] / max(b["cpu"], 1e-9) for a, b in zip(results[name, ours], results[name, peer])]
            print(f"  {name:24} {ours} / {peer}: {median(ratios):.2f} ({' '.join(f'{r:.2f}' for r in ratios)})")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


if __name__ == "__main__":
    main()
