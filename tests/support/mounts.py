"""Real file systems that fail the way disks do: a tiny tmpfs that fills up (ENOSPC) and a read-only bind mount
(EROFS). Both need root and `mount`; without them a test skips with the reason (CI runs as root: it fails)."""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from pathlib import Path
from typing import Iterator

from needs import missing


def _mount(*args: str) -> None:
    if os.geteuid() != 0:
        missing("mounting a file system needs root", "CI", "true")
    try:
        done = subprocess.run(["mount", *args], capture_output=True, text=True)
    except OSError as e:
        missing(f"cannot run mount: {e}", "CI", "true")
    if done.returncode:
        missing(f"mount {' '.join(args)} failed: {done.stderr.strip()}", "CI", "true")


def _umount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], check=True, capture_output=True)


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: str = "64k") -> Iterator[Path]:
    """`folder` (made if missing) as a tmpfs of `size` bytes, unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        _umount(folder)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the file system of `folder` with one file until at most `leave` bytes are free; returns the file."""
    filler = folder / ".filler"
    with open(filler, "ab") as f:
        while True:
            free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
            if free <= leave:
                break
            try:
                f.write(b"\0" * min(4096, free - leave))
                f.flush()
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    return filler


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """`folder` bind-mounted over itself read-only (root cannot write it either), restored afterwards."""
    _mount("--bind", str(folder), str(folder))
    try:
        done = subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True, text=True)
        if done.returncode:
            missing(f"remounting read-only failed: {done.stderr.strip()}", "CI", "true")
        yield folder
    finally:
        _umount(folder)
