"""Opening an output file: a regular file is written to a temporary file beside it and renamed into place when
complete; anything else the path names (standard output, a FIFO, a device) is written into directly.

Every file trecbench writes (`-o`, `--provenance`, `--save-assignments`, pools, qrels, nuggets, reports,
release files) goes through `open_output` or `write_output`, so an interrupted or failed command leaves the
old file or none, never half of one, and a path that cannot be written, or whose writing fails (a full disk,
a read-only file system, a folder that is a file), is an `InputError` naming it and the cause.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from typing import IO, TYPE_CHECKING, Any, Iterator, Union

from trecbench.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

PathLike = Union[str, "os.PathLike[str]"]

# The errors a write into a stream can raise (they carry no file name): from the body of `open_output` they
# are the output's own, said as "cannot write the file" rather than left as a traceback.
_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO, errno.EACCES, errno.EPERM}


def _cannot(path: PathLike, error: OSError) -> InputError:
    reason = error.strerror or str(error)
    return InputError(str(path), 0, f"cannot write the file: {reason}")


def _is_write_error(error: BaseException) -> bool:
    """An error of writing into the output's stream, not of some other file opened meanwhile (those name it)."""
    return isinstance(error, OSError) and error.filename is None and error.errno in _WRITE_ERRORS


@contextlib.contextmanager
def open_output(path: PathLike | None, *, binary: bool = False, append: bool = False) -> Iterator[Any]:
    """A stream to write `path` through; `None` or "-" is standard output.

    A regular file (or a new one) is written to a temporary file in the same folder, renamed over `path`
    when the block ends without an exception (an exception, Ctrl-C included, removes it, and the old file
    stays). A symbolic link is followed: the file it names is replaced and the link stays a link. A path
    that names something other than a regular file (a FIFO, a character device such as /dev/null or
    /dev/stdout) is written into directly, never replaced. `append` copies the existing file first, so the
    old content survives a failure too. Any failure to write (a full disk, a read-only file system, a
    path under a file, no permission) is an InputError naming `path` and the cause.
    """
    if path is None or str(path) == "-":
        with _written(sys.stdout.buffer if binary else sys.stdout, "standard output") as out:
            yield out
        return
    target = _target(path)
    kind = "other" if target.is_symlink() else _kind(target)
    if kind == "folder":
        raise InputError(str(path), 0, "cannot write the file: it is a folder")
    if kind == "other":
        with _direct(path, target, binary=binary, append=append) as stream:
            yield stream
        return
    with _replacing(path, target, binary=binary, append=append) as stream:
        yield stream


@contextlib.contextmanager
def _written(stream: IO[Any], name: PathLike) -> Iterator[IO[Any]]:
    """`stream` (left open), its write errors said as `name`'s."""
    try:
        yield stream
        stream.flush()
    except OSError as e:
        if not _is_write_error(e):
            raise
        raise _cannot(name, e) from None


@contextlib.contextmanager
def _direct(path: PathLike, target: Path, *, binary: bool, append: bool) -> Iterator[IO[Any]]:
    """Write into a FIFO or a device as it is: renaming a file over it would destroy the node."""
    mode = ("a" if append else "w") + ("b" if binary else "")
    try:
        stream = open(target, mode) if binary else open(target, mode, encoding="utf-8", newline="\n")
    except OSError as e:
        raise _cannot(path, e) from None
    try:
        with stream:
            yield stream
    except OSError as e:
        if not _is_write_error(e):
            raise
        raise _cannot(path, e) from None


@contextlib.contextmanager
def _replacing(path: PathLike, target: Path, *, binary: bool, append: bool) -> Iterator[IO[Any]]:
    """Write a temporary file beside `target` and rename it over `target` when complete."""
    import tempfile  # only when a file is written: printing to standard output does not pay for it

    folder = target.parent if str(target.parent) else type(target)(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise _cannot(path, e) from None
    ours = True  # while the error, if any, is of writing the temporary file or renaming it
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
            ours = False
            yield stream
            ours = True
        _keep_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and (ours or _is_write_error(e)):
            raise _cannot(path, e) from None
        raise


def write_output(path: PathLike, data: str | bytes) -> None:
    """Write a whole file (see `open_output`: atomically for a regular file, directly into a FIFO or device)."""
    with open_output(path, binary=isinstance(data, bytes)) as stream:
        stream.write(data)


def check_writable(path: PathLike | None) -> None:
    """Fail early (before any work) when `path` cannot be written: a missing or read-only folder, a folder, a
    file without write permission, a device or FIFO that cannot be opened for writing."""
    if path is None or str(path) == "-":
        return
    target = _target(path)
    kind = "other" if target.is_symlink() else _kind(target)
    if kind == "folder":
        raise InputError(str(path), 0, "cannot write the file: it is a folder")
    if kind == "other":  # written into directly: only the node itself must be writable
        if not os.access(target, os.W_OK):
            raise InputError(str(path), 0, "cannot write the file: permission denied")
        return
    folder = target.parent if str(target.parent) else type(target)(".")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "no folder"
        raise InputError(str(path), 0, f"cannot write the file: {what} {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK) or (kind == "file" and not os.access(target, os.W_OK)):
        raise InputError(str(path), 0, f"cannot write the file: {_why_not(folder)}")


def _why_not(folder: Path) -> str:
    """Why a folder os.access calls unwritable cannot be written: its file system is read-only, or permission."""
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return os.strerror(errno.EROFS) if read_only else "permission denied"


def _target(path: PathLike) -> Path:
    """The file to write for `path` (see `_followed`); pathlib is imported only when a file is written, so
    printing to standard output does not pay for it."""
    from pathlib import Path

    return _followed(Path(path))


def _followed(path: Path) -> Path:
    """What to write: the file a symbolic link (or a chain of them) names, so that the link is kept and its
    target replaced; `path` itself for anything else, and for the kernel's own links (/dev/stdout,
    /dev/fd/N, /proc/PID/fd/N), which name an open stream rather than a file and are written into."""
    if not path.is_symlink():
        return path
    real = os.path.realpath(path)
    return path if real.startswith("/proc/") else type(path)(real)


def _kind(target: Path) -> str:
    """"new" (nothing there, or a path that cannot be looked at: writing will say why), "file", "folder" or
    "other" (a FIFO, a device, a socket)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return "new"
    if stat.S_ISREG(mode):
        return "file"
    return "folder" if stat.S_ISDIR(mode) else "other"


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
