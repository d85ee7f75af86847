"""The process a heavy command runs in, set up for numpy work (called by commands, never by the library: it is the
whole process's setting)."""
from __future__ import annotations

import os


def lean_process() -> None:
    """One OpenBLAS thread, and the arrays numpy frees kept in the heap for the next ones (glibc's malloc).

    Scoring and pooling use no BLAS; starting OpenBLAS's threads costs more CPU than scoring a small run. Both
    make and drop arrays of a few MiB per block of topics or per run file; by default glibc maps each one afresh
    (or gives the top of its heap back) and the kernel faults its pages in again every time: on one run of 500k
    lines that was 35k page faults, 0.1 s of system time, as much as trec_eval's whole system time; pooling 50
    such runs, 280k faults and 1.5 s.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import ctypes  # numpy imports it anyway

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: blocks below 32 MiB come from the heap
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: freed memory kept for reuse, up to 256 MiB
    except (OSError, AttributeError):  # not glibc
        pass
