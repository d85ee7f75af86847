"""The options every command that calls a model shares, validated by click, and the exit rule of those commands.

    @model_options()
    def command(..., model_opts: ModelOptions): config = model_opts.config()

Exit status of a model command (README "Exit status"):
0 everything asked for is complete; 1 some items are incomplete or failed (listed on stderr); 2 bad input
(files, option values, a model or server that refuses the request); 3 stopped by `--max-cost`; 130
interrupted (Ctrl-C). What finished is saved in every case.
"""
from __future__ import annotations

import functools
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import click

from trecbench.llm.cost import dollars

__all__ = ["ModelOptions", "model_options", "exit_status", "finish", "interruptible", "model_errors",
           "ProgressBar", "describe_judging", "describe_estimate", "dollars", "OK", "INCOMPLETE", "BAD_INPUT",
           "BUDGET_STOP", "INTERRUPTED"]

OK, INCOMPLETE, BAD_INPUT, BUDGET_STOP, INTERRUPTED = 0, 1, 2, 3, 130


def exit_status(*, incomplete: bool, budget_stop: bool = False) -> int:
    """The one exit rule of model commands: a budget stop (3) before incomplete or failed items (1), else 0."""
    if budget_stop:
        return BUDGET_STOP
    return INCOMPLETE if incomplete else OK


def finish(problems: list[str], header: str, *, stopped: str | None = None, budget_stop: bool = False) -> None:
    """List what failed (under `header`) or stopped on stderr, and exit by the rule (`exit_status`); return when
    everything completed."""
    if stopped:
        click.echo(f"stopped early: {stopped}", err=True)
    if problems:
        click.echo(f"{header}:", err=True)
        for line in problems:
            click.echo(f"  {line}", err=True)
    status = exit_status(incomplete=bool(problems) or bool(stopped), budget_stop=budget_stop)
    if status:
        sys.exit(status)


class ProgressBar:
    """A tqdm bar on stderr (nothing when `off`): started with a total, updated with the run's counts."""

    def __init__(self, off: bool, unit: str):
        self.off, self.unit, self.bar = off, unit, None

    def start(self, total: int) -> None:
        if not self.off and total:
            from trecbench.helpers.progress import progress_bar

            self.bar = progress_bar(True, total=total, unit=self.unit, leave=True)

    def update(self, n: int, done: int, failed: int, usage: Any) -> None:
        if self.bar is not None:
            self.bar.update(n)
            self.bar.set_postfix_str(f"done {done} failed {failed} tokens "
                                     f"{usage.prompt_tokens + usage.completion_tokens} {dollars(usage.cost)}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def describe_judging(plan: Any) -> str:
    """The first line of `judge llm`: the judge's name and what is left to judge (`JudgingPlan`)."""
    if plan.adaptive:
        return (f"judge {plan.judge.name}: adaptive pool {plan.pool_name!r} ({plan.strategy}), up to {plan.total} "
                f"documents; {plan.skipped} already judged")
    line = (f"judge {plan.judge.name}: {plan.total} documents to judge in {plan.calls} calls; "
            f"{plan.skipped} already judged")
    others = ", ".join(f"{o.name} ({_KINDS.get(o.kind, o.kind)}) {o.pairs}" for o in plan.others)
    if plan.left_out:
        return f"{line}; {plan.left_out} graded by other judges left out (--only-unjudged): {others}"
    if others:
        return f"{line}; of these, other judges already graded: {others} (--only-unjudged leaves them out)"
    return line


_KINDS = {"human": "people", "import": "imported", "model": "another model judge"}


def describe_estimate(estimate: Any) -> str:
    """One line for a judging dry run (`trecbench.judging.estimate.Estimate`): calls, tokens and dollars."""
    total = estimate.total
    if total is None:
        return "dry run: nothing to judge, no call to the model"
    prices = estimate.prices
    cost = (f"{dollars(float(total['cost_usd']))} (prices: {prices.source})" if prices is not None
            else "cost unknown: no price for this model (give --input-price and --output-price)")
    return (f"dry run: {int(total['calls'])} calls to the model ({int(total['cached_calls'])} answered by the cache) "
            f"for {int(total['judgments'])} judgments, {int(total['input_tokens'])} input tokens, "
            f"~{int(total['output_tokens'])} output tokens, {cost}; nothing was written")


class Finite(click.ParamType):
    """A finite number in [low, high] (`low_open`: strictly above low); nan and inf are refused."""

    name = "number"

    def __init__(self, low: float | None = None, high: float | None = None, *, low_open: bool = False):
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.low is not None and (number <= self.low if self.low_open else number < self.low):
            self.fail(f"{value!r} must be {'above' if self.low_open else 'at least'} {self.low:g}", param, ctx)
        if self.high is not None and number > self.high:
            self.fail(f"{value!r} must be at most {self.high:g}", param, ctx)
        return number


def _model_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    if not value.strip() or value != value.strip() or any(c.isspace() for c in value):
        raise click.BadParameter(f"{value!r} is not a model name (e.g. openai/gpt-4o-mini)")
    from trecbench.llm import LLMError
    from trecbench.llm.config import check_model_name

    try:
        check_model_name(value)
    except LLMError as e:
        raise click.BadParameter(str(e)) from None
    return value


def _urls(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    for url in value:
        if not url.startswith(("http://", "https://")) or len(url) <= len("https://"):
            raise click.BadParameter(f"{url!r} is not a server URL (http://host:port/v1)")
    return value


@dataclass(frozen=True)
class ModelOptions:
    """The shared model options of one command, as given."""

    model: str | None = None
    api_bases: tuple[str, ...] = ()
    api_key: str | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    rpm: float | None = None
    max_cost: float | None = None
    temperature: float | None = None
    input_price: float | None = None
    output_price: float | None = None

    @property
    def prices(self) -> tuple[float, float] | None:
        """(input, output) dollars per million tokens given on the command line, if both were."""
        if self.input_price is None and self.output_price is None:
            return None
        return (self.input_price or 0.0, self.output_price or 0.0)

    def config(self, *, temperature: float = 0.0) -> Any:
        """The `trecbench.llm.ModelConfig` these options describe (`temperature` when none was given)."""
        from trecbench.llm import ModelConfig

        if not self.model:
            raise click.UsageError("this needs --model")
        key = {"api_key": self.api_key} if self.api_key else {}
        several = len(self.api_bases) > 1
        return ModelConfig(self.model, api_base=self.api_bases[0] if len(self.api_bases) == 1 else None,
                           api_key=self.api_key,
                           params={"temperature": self.temperature if self.temperature is not None else temperature},
                           timeout=self.timeout, max_retries=self.max_retries, concurrency=self.concurrency,
                           rpm=self.rpm, prices=self.prices,
                           deployments=[{"model": self.model, "api_base": b, **key} for b in self.api_bases]
                           if several else None)


    def client(self, *, cache: Any = None, temperature: float = 0.0) -> Any:
        """A `trecbench.llm.LLM` for these options, with the `--max-cost` budget (cache: a database path)."""
        from trecbench.llm import LLM, Budget

        return LLM(self.config(temperature=temperature), cache=cache,
                   budget=Budget(self.max_cost) if self.max_cost is not None else None)


_NAMES = ("model", "api_bases", "api_key", "concurrency", "timeout", "max_retries", "rpm", "max_cost", "temperature",
          "input_price", "output_price")


def model_options(*, required: bool = True, timeout: float = 60.0, concurrency: int = 8,
                  temperature_help: str = "Sampling temperature (default 0).",
                  what: str = "") -> Callable[[Callable], Callable]:
    """The shared model options; the command receives them as one `model_opts: ModelOptions` argument.

    `what` ("for --assigner llm") is added to --model's help; `required=False` for commands that can
    run without a model.
    """
    suffix = f" {what}" if what else ""
    options = [
        click.option("--model", required=required, callback=_model_name,
                     help=f"A litellm model name (openai/gpt-4o-mini, hosted_vllm/..., ollama/...){suffix}."),
        click.option("--api-base", "api_bases", multiple=True, callback=_urls,
                     help="Server URL (OpenAI-compatible, vLLM, Ollama ...); repeat to spread calls over servers."),
        click.option("--api-key", envvar="TRECBENCH_API_KEY", help="API key (default: the provider's usual variable)."),
        click.option("--concurrency", default=concurrency, show_default=True, type=click.IntRange(1, 512),
                     help="Model calls in flight at once."),
        click.option("--timeout", default=timeout, show_default=True, type=Finite(0, 3600, low_open=True),
                     help="Seconds per request."),
        click.option("--max-retries", default=4, show_default=True, type=click.IntRange(0, 20),
                     help="Retries on 429, 5xx and timeouts."),
        click.option("--rpm", default=None, type=Finite(0, low_open=True),
                     help="At most this many calls start per minute."),
        click.option("--max-cost", default=None, type=Finite(0),
                     help="Stop before spending more than this many dollars (0: spend nothing; exit 3)."),
        click.option("--temperature", default=None, type=Finite(0, 2), help=temperature_help),
        click.option("--input-price", default=None, type=Finite(0),
                     help="Dollars per million input tokens, for a model litellm has no price for."),
        click.option("--output-price", default=None, type=Finite(0),
                     help="Dollars per million output tokens, for a model litellm has no price for."),
    ]

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs["model_opts"] = ModelOptions(**{name: kwargs.pop(name) for name in _NAMES})
            return f(*args, **kwargs)

        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


@contextmanager
def model_errors() -> Iterator[None]:
    """A model setting or server that refuses every request (bad key, unknown model, a limit without a price)
    ends the command with its message and exit status 2; nothing was recorded for it."""
    from trecbench.llm import BudgetExceeded, LLMError

    try:
        yield
    except BudgetExceeded as e:
        click.echo(f"stopped: {e}", err=True)
        sys.exit(BUDGET_STOP)
    except LLMError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(BAD_INPUT)


@contextmanager
def interruptible(message: str) -> Iterator[None]:
    """Ctrl-C ends the command with `message` on one line and exit status 130."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted: {message}", err=True)
        sys.exit(INTERRUPTED)
