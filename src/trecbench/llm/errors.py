"""The ways a model call can fail loudly: a failed call, an unreadable reply, a spent budget."""
from __future__ import annotations


class LLMError(Exception):
    """Base of every error raised by `trecbench.llm`."""


class ModelCallError(LLMError):
    """A model call failed: retries ran out, or the request itself is wrong (bad key, unknown model).

    `fatal` is True when every further call would fail the same way (authentication, permission, unknown
    model, unsupported parameter): the run should stop. Otherwise the failure belongs to this one request
    (retries exhausted, prompt too long, content refused) and the caller records it and goes on.
    `unreachable` is True when no server was ever reached (nothing listens, the host name does not
    resolve): the request was never really asked, so nothing is logged for it.
    """

    def __init__(self, message: str, *, model: str = "", status: int | None = None, attempts: int = 0,
                 fatal: bool = False, retryable: bool = False, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable
        self.model = model
        self.status = status
        self.attempts = attempts
        self.fatal = fatal
        self.retryable = retryable


class ParseError(LLMError, ValueError):
    """A reply could not be read; `reason` says why, in words a model can act on when re-asked."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BudgetExceeded(LLMError):
    """The next call would take spending past `--max-cost`; the caller stops cleanly (done work is kept)."""

    def __init__(self, spent: float, estimate: float, limit: float):
        super().__init__(
            f"budget reached: spent ${spent:.4f} (+${estimate:.4f} reserved or estimated for the next call) "
            f"of the ${limit:.4f} allowed by --max-cost"
        )
        self.spent = spent
        self.estimate = estimate
        self.limit = limit
