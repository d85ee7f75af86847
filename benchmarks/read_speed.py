"""Reading TREC files into what `read_run` / `read_qrels` return: each fast path against a raw read of the bytes.

Paths measured (each must give the very DataFrame the shipped reader gives: dtypes, values, attrs):
  raw      `open(path, "rb").read()`: the physical floor, no parsing
  columns  trecbench.files.columns.split_fields, as `read_run` and `read_qrels` use it (their
           `_columns_run`, `_columns_qrels`): a vectorised numpy split of clean bytes, the ids handed to
           pandas as Arrow strings (runs) or Python str (qrels, whose ids are object dtype)
  arrow    pyarrow's multi-threaded CSV reader on one delimiter (the reader `read_run` used before
           issue 20; kept here, written out, so the comparison can be repeated)
  pandas   pandas' C parser (`files.trec.fast_table`: what `read_qrels` used first before issue 20,
           still the next try for files the columns path refuses; qrels only, as for runs it gives
           object ids where the clean path gives Arrow strings)
Inputs: a synthetic run (~50 MB, 6 fields, single spaces, seeded numpy), the real runs of
/work/shared/data/real (12 files), a synthetic qrels file (~20 MB) and the real qrels (6 files).

Every measurement is its own child process, and the rounds are interleaved: round 1 runs every
(input, path) once, in an order that rotates each round, then round 2, and so on, so a change of
the machine's load falls on every path alike. The child times the read alone with
time.process_time (all its threads' CPU: pyarrow's reader uses both cores); os.wait4 gives the
child's whole CPU (start-up included) and peak RSS. The best of the rounds is printed, with MB per
CPU second and, last, the ratio to the raw read's CPU.

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
RUN_PATHS = ["raw", "columns", "arrow"]
QRELS_PATHS = ["raw", "columns", "arrow", "pandas"]


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


def arrow_table(data: bytes, names: list[str], keep: dict[str, str]):
    """pyarrow's CSV reader on the first line's delimiter (tab, else space), as `read_run` used it."""
    import numpy as np
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
            read_options=pcsv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=delim.decode(), quote_char=False, double_quote=False,
                                            escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(keep), column_types={k: types[v] for k, v in keep.items()},
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[], check_utf8=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or any(table.column(k).null_count for k in keep):
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


def qrels_by_pandas(data: bytes, path: str):
    from trecbench.qrels.trec import _fast_qrels

    return _fast_qrels(data, path)


READERS = {("run", "columns"): run_by_columns, ("run", "arrow"): run_by_arrow,
           ("qrels", "columns"): qrels_by_columns, ("qrels", "arrow"): qrels_by_arrow, ("qrels", "pandas"): qrels_by_pandas}


def child(kind: str, how: str, files: list[str]) -> None:
    """Read every file one way; print the read's CPU seconds, bytes, rows and RSS after the imports."""
    import resource

    import numpy  # noqa: F401  (the imports are start-up, not reading: done before the clock starts)
    import pandas  # noqa: F401
    import pyarrow.csv  # noqa: F401

    import trecbench.files.columns  # noqa: F401
    import trecbench.qrels.trec  # noqa: F401
    import trecbench.runs.trec  # noqa: F401

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
            rows += len(frame)
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
    """The files every path reads, each giving the very frame the shipped reader gives (dtypes, values, attrs).

    A file some path refuses is named and left out of the timing (the shipped reader then falls back);
    a path that gives another frame stops the script.
    """
    import pandas as pd

    from trecbench.qrels import read_qrels
    from trecbench.runs import read_run

    kept = []
    for name in files:
        with open(name, "rb") as f:
            data = f.read()
        shipped = read_run(name) if kind == "run" else read_qrels(name)
        refused = []
        for how in hows:
            if how == "raw":
                continue
            frame = READERS[kind, how](data, name)
            if frame is None:
                refused.append(how)
                continue
            pd.testing.assert_frame_equal(frame, shipped, check_exact=True)
            if frame.attrs != shipped.attrs or list(frame.dtypes) != list(shipped.dtypes):
                sys.exit(f"{how} gives other attrs or dtypes than the shipped reader on {name}")
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
        print(json.dumps(check_identical(args.check[0], args.check[1:], RUN_PATHS if args.check[0] == "run" else QRELS_PATHS)))
        return
    cases = []
    for name, kind, files in inputs(Path(args.folder), args.mb):
        # in a child, so this process stays small: a child's rusage starts from its parent's peak RSS
        checked = subprocess.run([sys.executable, __file__, "--check", kind, *files], stdout=subprocess.PIPE, check=True)
        *notes, last = checked.stdout.decode().splitlines()
        for note in notes:
            print(note)
        kept = json.loads(last)
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
    print(f"{'input':24} {'path':8} {'MB':>7} {'rows':>9} {'read CPU s':>10} {'median':>7} {'MB/CPU s':>9} "
          f"{'child CPU s':>11} {'peak MiB':>8} {'+MiB':>6} {'x raw':>7}")
    for name, kind, _ in cases:
        raw = min(x["cpu"] for x in results[name, "raw"])
        for how in RUN_PATHS if kind == "run" else QRELS_PATHS:
            recs = results[name, how]
            best = min(recs, key=lambda x: x["cpu"])
            median = sorted(x["cpu"] for x in recs)[len(recs) // 2]
            mb = best["bytes"] / 1e6
            print(f"{name:24} {how:8} {mb:7.1f} {best['rows']:9} {best['cpu']:10.3f} {median:7.3f} "
                  f"{mb / max(best['cpu'], 1e-9):9.1f} {best['child_cpu']:11.2f} {max(x['peak_mib'] for x in recs):8.0f} "
                  f"{max(x['added_mib'] for x in recs):6.0f} {best['cpu'] / max(raw, 1e-9):7.1f}")


if __name__ == "__main__":
    main()
