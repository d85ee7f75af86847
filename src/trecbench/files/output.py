"""Opening an output file: written to a temporary file beside it and renamed into place when complete.

Every file trecbench writes (`-o`, `--provenance`, `--save-assignments`, pools, qrels, nuggets, reports,
release files) goes through `open_output` or `write_output`, so an interrupted or failed command leaves the
old file or none, never half of one, and a path that cannot be written is an `InputError` naming it.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator, Union

from trecbench.errors import InputError

PathLike = Union[str, "os.PathLike[str]"]


def _cannot(path: PathLike, error: OSError) -> InputError:
    reason = error.strerror or str(error)
    return InputError(str(path), 0, f"cannot write the file: {reason}")


@contextlib.contextmanager
def open_output(path: PathLike | None, *, binary: bool = False, append: bool = False) -> Iterator[Any]:
    """A stream to write `path` through; `None` or "-" is standard output.

    The data goes to a temporary file in the same folder, renamed over `path` when the block ends without
    an exception (an exception, Ctrl-C included, removes it). `append` copies the existing file first, so
    the old content survives a failure too.
    """
    if path is None or str(path) == "-":
        out: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        yield out
        out.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise InputError(str(path), 0, "cannot write the file: it is a folder")
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise _cannot(path, e) from None
    try:
        stream: IO[Any]
        if binary:
            stream = os.fdopen(fd, "wb")
        else:
            stream = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        with stream:
            if append and target.exists():
                old: Any = target.read_bytes() if binary else target.read_text(encoding="utf-8")
                stream.write(old)
            yield stream
        _keep_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_output(path: PathLike, data: str | bytes) -> None:
    """Write a whole file atomically (see `open_output`)."""
    with open_output(path, binary=isinstance(data, bytes)) as stream:
        stream.write(data)


def check_writable(path: PathLike | None) -> None:
    """Fail early (before any work) when `path` cannot be written: a missing or read-only folder, a folder."""
    if path is None or str(path) == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise InputError(str(path), 0, "cannot write the file: it is a folder")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(str(path), 0, f"cannot write the file: no folder {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise InputError(str(path), 0, "cannot write the file: permission denied")


def _keep_mode(target: Path, tmp: str) -> None:
    """The new file gets the old one's permissions, or the usual ones for a new file (mkstemp makes 0600)."""
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    with contextlib.suppress(OSError):
        os.chmod(tmp, mode)
