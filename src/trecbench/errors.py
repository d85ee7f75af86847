"""Bad input is reported one way: `path:line: what is wrong`, every problem at once."""
from __future__ import annotations

from typing import Iterable, NamedTuple, Sized, TypeVar

T = TypeVar("T", bound=Sized)


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
    """

    def __init__(self, path: str = "", line: int = 0, message: str = "", *, problems: Iterable[Problem] = ()):
        self.problems: list[Problem] = list(problems)
        if message:
            self.problems.insert(0, Problem(str(path), line, message))
        super().__init__(str(self))

    @classmethod
    def of(cls, problems: Iterable[Problem]) -> "InputError":
        return cls(problems=problems)

    @property
    def path(self) -> str:
        return self.problems[0].path if self.problems else ""

    @property
    def line(self) -> int:
        return self.problems[0].line if self.problems else 0

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


def checked(items: T, problems: list[Problem], where: str, what: str) -> T:
    """The end of every reader: `items`, or an InputError with every problem (an empty file is one: no `what`)."""
    if not items and not problems:
        problems.append(Problem(where, 0, f"no {what} found"))
    if problems:
        raise InputError.of(problems)
    return items
