"""Bad input is reported one way: `path:line: what is wrong`, every problem at once."""
from __future__ import annotations

from typing import Iterable, NamedTuple, Sized, TypeVar

T = TypeVar("T", bound=Sized)
LISTED = 20  # problems a command prints before it counts the rest: a wrong file is one screen, not thousands
KEPT = 1000  # problems a validation keeps (and lists) before it counts the rest: its memory is bounded by these


class Problem(NamedTuple):
    """One thing wrong with an input file. `line` is 1-based; 0 means the file as a whole."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}: {self.message}"
        return f"{self.path}: {self.message}"


class InputError(Exception):
    """Raised by every reader on bad input; carries all the problems found, not only the first.

    `InputError(path, line, message)` reports one problem; `InputError.of(problems)` several.
    `looks_like` names the format every line of the file has when it is another format's file
    ("run" for a run given as qrels, "qrels" for the reverse): files passed in the wrong order.
    """

    def __init__(self, path: str = "", line: int = 0, message: str = "", *, problems: Iterable[Problem] = (),
                 looks_like: str = ""):
        self.problems: list[Problem] = list(problems)
        if message:
            self.problems.insert(0, Problem(str(path), line, message))
        self.looks_like = looks_like
        super().__init__(str(self))

    @classmethod
    def of(cls, problems: Iterable[Problem], *, looks_like: str = "") -> "InputError":
        return cls(problems=problems, looks_like=looks_like)

    @property
    def path(self) -> str:
        return self.problems[0].path if self.problems else ""

    @property
    def line(self) -> int:
        return self.problems[0].line if self.problems else 0

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)

    def listing(self, limit: int = LISTED) -> list[str]:
        """The lines a command prints: the first `limit` problems, `... and N more problems`, and when the
        file is another format's, `path: this looks like a run file; did you swap --qrels and the run?`."""
        lines = [str(p) for p in self.problems[:limit]]
        rest = len(self.problems) - limit
        if rest > 0:
            lines.append(f"... and {rest} more problem{'s' * (rest != 1)}")
        if self.looks_like:
            lines.append(f"{self.path}: this looks like a {self.looks_like} file; did you swap --qrels and the run?")
        return lines


class ProblemList:
    """Problems in the order found: the first `keep` are kept, the rest only counted (memory stays bounded
    whatever the file holds). `listed()` is the kept ones and, if any was left out, a last line saying how
    many: `path: N more problems not listed`."""

    def __init__(self, path: str, keep: int = KEPT):
        self.path, self.keep = path, keep
        self.kept: list[Problem] = []
        self.more = 0

    def add(self, line: int, message: str) -> None:
        if len(self.kept) < self.keep:
            self.kept.append(Problem(self.path, line, message))
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.kept)

    def listed(self) -> list[Problem]:
        if not self.more:
            return list(self.kept)
        return [*self.kept, Problem(self.path, 0, f"{self.more} more problem{'s' * (self.more != 1)} not listed")]


def checked(items: T, problems: list[Problem], where: str, what: str) -> T:
    """The end of every reader: `items`, or an InputError with every problem (an empty file is one: no `what`)."""
    if not items and not problems:
        problems.append(Problem(where, 0, f"no {what} found"))
    if problems:
        raise InputError.of(problems)
    return items
