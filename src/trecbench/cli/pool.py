"""`trecbench pool`: pool runs for judging, describe the pool, estimate judging costs, check reusability."""
from __future__ import annotations


import click

from trecbench.cli.common import format_option, print_table, workspace_option
from trecbench.helpers.process import lean_process
from trecbench.pooling.dedup import DEDUP_MODES



def _strategies():
    from trecbench.pooling.strategies import STRATEGIES

    return STRATEGIES


def strategy_choice(**kwargs):
    """`-s/--strategy`: the registered pooling strategies."""
    names = list(_strategies())
    return click.option("-s", "--strategy", type=click.Choice(names), **kwargs)


def strategy_help() -> str:
    return "; ".join(f"{name}: {cls.summary}" for name, cls in _strategies().items() if cls.summary) + "."


def strategy_parameters(f):
    """One option per parameter of a registered strategy: --rrf-k, --rbp-p, ... (`--NAME-PARAM`)."""
    from dataclasses import fields

    for name, cls in reversed(list(_strategies().items())):
        for field in reversed(fields(cls) if hasattr(cls, "__dataclass_fields__") else ()):
            kind = click.FLOAT if isinstance(field.default, float) else click.INT
            f = click.option(f"--{name}-{field.name.replace('_', '-')}", f"{name}__{field.name}", type=kind,
                             default=field.default, show_default=True,
                             help=cls.param_help.get(field.name, f"{field.name} of {name}."))(f)
    return f


def _chosen_params(strategy: str, values: dict) -> dict:
    prefix = f"{strategy}__"
    return {key[len(prefix):]: value for key, value in values.items() if key.startswith(prefix)}


class PoolGroup(click.Group):
    """`trecbench pool RUN...` is short for `trecbench pool build RUN...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["build", *args]
        return super().parse_args(ctx, args)


def _problems(problems) -> None:
    for p in problems:
        click.echo(str(p), err=True)


def _output(path: str | None):
    """Standard output, or the file written atomically (`trecbench.files.output.open_output`)."""
    from trecbench.files.output import open_output

    return open_output(path or "-")


@click.group(cls=PoolGroup)
def pool() -> None:
    """Pool runs for judging (depth-k, fused or adaptive), de-duplicated, with a judging budget.

    `trecbench pool RUN...` is short for `trecbench pool build RUN...`.

    \b
    Example:
      trecbench pool bm25.txt dense.txt --depth 100 -o pool.tsv
      trecbench pool stats pool.tsv --qrels qrels.txt
      trecbench pool list -w mybench
    """


@pool.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "--depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Pool each run's top K documents per topic (trec_eval order).")
@strategy_choice(default="depth", show_default=True, help=strategy_help())
@click.option("-b", "--budget", type=click.IntRange(min=1), default=None,
              help="Judgments per topic: a static strategy keeps the first N representatives (and their "
                   "duplicates); an adaptive one stops judging after N.")
@click.option("-t", "--topics", "topics_path", default=None, help="Pool only these topics (TSV, JSONL or irds:).")
@click.option("-c", "--corpus", "corpus_path", default=None, help="Documents' text, for --dedup (JSONL, TSV, irds:).")
@click.option("--dedup", type=click.Choice(DEDUP_MODES), default="none", show_default=True,
              help="exact: identical normalised text (not the title); near: word 5-shingle Jaccard >= --threshold. "
                   "Needs --corpus.")
@click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Jaccard similarity from which two documents are near-duplicates.")
@strategy_parameters
@click.option("-o", "--output", default=None, help="Pool file to write (TSV); standard output when neither -o nor -w.")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="Store the pool in this workspace (what `judge llm` and `serve` judge); the workspace's corpus "
                   "and topics are used unless --corpus / --topics are given.")
@click.option("--name", default=None, help="Name of the pool in the workspace (default: strategy-depth-N).")
def build(runs, depth, strategy, budget, topics_path, corpus_path, dedup, threshold, output, workspace, name,
          **params) -> None:
    """Pool RUN files: one candidate per (topic, docid), with the runs that retrieved it, in judging order.

    Writes the pool file (TSV with a header: query_id doc_id priority best_rank n_runs runs ranks group
    representative); a summary and any problems go to stderr.

    \b
    Example:
      trecbench pool build bm25.txt dense.txt splade.txt --depth 100 -o pool.tsv
      trecbench pool bm25.txt dense.txt --depth 100 --strategy rrf --budget 50 -o pool.tsv
      trecbench pool bm25.txt dense.txt --corpus corpus.jsonl --dedup near -o pool.tsv
      trecbench pool bm25.txt dense.txt --depth 20 --dedup near -w mybench
    """
    from trecbench.pooling.workspace import pool_runs

    lean_process()
    try:
        result, stored = pool_runs(runs, workspace=workspace, name=name, topics=topics_path, corpus=corpus_path,
                                   strategy=strategy, params=_chosen_params(strategy, params), depth=depth,
                                   budget=budget, dedup=dedup, threshold=threshold)
    except ValueError as e:
        raise click.UsageError(f"{e}" + ("; choose another --name" if "already exists" in str(e) else "")) from None
    _problems(result.problems)
    if output is not None or workspace is None:
        with _output(output) as stream:
            result.write(stream)
    if stored is not None:
        click.echo(f"stored in {workspace} as pool {stored!r}", err=True)
    click.echo(result.summary(), err=True)


@pool.command("list")
@workspace_option
@format_option("table", "csv", "json")
def list_(workspace, fmt) -> None:
    """List the pools stored in a workspace, oldest first: size, duplicate-group representatives to
    judge, how many of them are judged. `judge llm`, `serve`, `report` and `qrels export` take the
    newest unless given `--pool NAME`.

    \b
    Example:
      trecbench pool list -w mybench
    """
    import pandas as pd

    from trecbench.store import Workspace

    pools = Workspace(workspace).pool_summaries()
    if not pools:
        click.echo(f"no pool in {workspace} yet: make one with `trecbench pool RUN... -w {workspace}`", err=True)
        return
    print_table(pd.DataFrame([{"id": s.pool.id, "name": s.pool.name, "strategy": s.pool.strategy,
                               "depth": s.pool.params.get("depth"), "topics": s.topics, "candidates": s.candidates,
                               "to_judge": s.to_judge, "judged": s.judged, "created_at": s.pool.created_at}
                              for s in pools]).set_index("id"), fmt)


@pool.command("delete")
@click.argument("pool_id", metavar="POOL")
@workspace_option
def delete(pool_id, workspace) -> None:
    """Delete POOL (its name or id, as `pool list` shows) from a workspace, if nothing uses it: a pool
    with a judgment or an open web-app lease of one of its candidates is kept.

    \b
    Example:
      trecbench pool delete depth-20 -w mybench
    """
    from trecbench.store import Workspace

    gone = Workspace(workspace).delete_pool(pool_id)
    click.echo(f"deleted pool {gone.pool.name!r} (id {gone.pool.id}, {gone.candidates} candidates) from {workspace}",
               err=True)


@pool.command()
@click.argument("pool_file", metavar="POOL", type=click.Path(dir_okay=False))
@click.option("--qrels", "qrels_path", default=None, type=click.Path(dir_okay=False),
              help="Judgments so far: adds judged, unjudged and relevant counts.")
@click.option("--by", type=click.Choice(["all", "topic", "run", "topic-run", "overlap"]), default="all",
              show_default=True, help="Which table to print (all: per topic, per run and overlap).")
@click.option("-l", "--rel-level", default=1, show_default=True, type=int, help="Lowest grade counted as relevant.")
@format_option("table", "csv", "json")
def stats(pool_file, qrels_path, by, rel_level, fmt) -> None:
    """Describe POOL per topic and per run: size, documents only one run contributed, overlap, judged.

    \b
    Example:
      trecbench pool stats pool.tsv
      trecbench pool stats pool.tsv --qrels qrels.txt --by run --format csv
    """
    from trecbench.pooling.pool import read_pool
    from trecbench.pooling.stats import pool_stats

    qrels = None
    if qrels_path:
        from trecbench.qrels import read_qrels

        from trecbench.evaluation.retrieval.output import relevance_rule

        qrels = read_qrels(qrels_path)
        click.echo(relevance_rule(rel_level), err=True)  # what the relevant columns count
    tables = pool_stats(read_pool(pool_file), qrels, rel_level=rel_level)
    chosen = {"topic": ["topics"], "run": ["runs"], "topic-run": ["topic_runs"], "overlap": ["overlap"],
              "all": ["topics", "runs", "overlap"]}[by]
    if fmt == "json" and len(chosen) > 1:
        import json

        click.echo(json.dumps({name: tables[name].reset_index().to_dict(orient="records") for name in chosen},
                              indent=2, default=int))
        return
    if fmt == "csv" and len(chosen) > 1:
        raise click.UsageError("--format csv prints one table: choose it with --by topic|run|topic-run|overlap")
    for i, name in enumerate(chosen):
        if fmt == "table" and len(chosen) > 1:
            click.echo(("\n" if i else "") + {"topics": "per topic", "runs": "per run",
                                               "overlap": "overlap (candidates both runs retrieved)"}[name])
        print_table(tables[name], fmt)


@pool.command()
@click.argument("pool_file", metavar="POOL", type=click.Path(dir_okay=False))
@click.option("--model", required=True, help="litellm model name (gpt-4o-mini, anthropic/claude-sonnet-4-5, ...).")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True, help="Passages judged per model call.")
@click.option("-c", "--corpus", "corpus_path", required=True, help="Documents' text (JSONL, TSV, irds:).")
@click.option("-t", "--topics", "topics_path", required=True, help="Topics' text (TSV, JSONL, irds:).")
@click.option("--input-price", type=click.FloatRange(min=0), default=None,
              help="Dollars per million input tokens (instead of litellm's cost map).")
@click.option("--output-price", type=click.FloatRange(min=0), default=None,
              help="Dollars per million output tokens (instead of litellm's cost map).")
@format_option("table", "csv", "json")
def estimate(pool_file, model, batch, corpus_path, topics_path, input_price, output_price, fmt) -> None:
    """Estimate what judging POOL with a model costs: judgments, calls, tokens and dollars per topic.

    Offline: tokens by litellm's token counter, prices from litellm's bundled cost map, or
    --input-price/--output-price in dollars per million tokens.

    \b
    Example:
      trecbench pool estimate pool.tsv --model gpt-4o-mini --batch 10 --corpus corpus.jsonl --topics topics.tsv
      trecbench pool estimate pool.tsv --model my-local-model --input-price 0.2 --output-price 0.6 -c corpus.jsonl -t topics.tsv
    """
    from trecbench.llm.cost import dollars
    from trecbench.judging.estimate import UnknownModelError, estimate_cost
    from trecbench.pooling.pool import read_pool

    try:
        result = estimate_cost(read_pool(pool_file), corpus_path, topics_path, model, batch=batch,
                               input_price=input_price, output_price=output_price)
    except UnknownModelError as e:
        raise click.BadParameter(str(e), param_hint="'--model'") from None
    _problems(result.problems)
    table = result.table.copy()
    if fmt == "table":
        table["cost_usd"] = table["cost_usd"].map(lambda v: dollars(v)[1:])
    print_table(table, fmt)
    total = result.table.loc["all"]
    click.echo(f"{model}, batch {batch}: {int(total['judgments'])} judgments in {int(total['calls'])} calls, "
               f"{int(total['input_tokens'])} input + {int(total['output_tokens'])} output tokens, "
               f"{dollars(total['cost_usd'])} (prices: {result.prices.source if result.prices else 'none'})", err=True)


@pool.command()
@click.option("--qrels", "qrels_path", default=None, type=click.Path(dir_okay=False),
              help="The judgments (TREC qrels); with -w, the workspace's qrels unless given.")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="Use a stored pool: its runs and depth, and the workspace's qrels.")
@click.option("--pool", "pool_name", default=None, help="With -w: the stored pool (default: the newest).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="Measure (ir-measures or trec_eval name). Repeatable. Default: nDCG@10 R@100.")
@click.option("-k", "--depth", type=click.IntRange(min=1), default=None,
              help="Pool depth at which a run's own documents are counted [100; with -w: the pool's].")
@click.option("-l", "--rel-level", default=1, show_default=True, type=int, help="Lowest grade counted as relevant.")
@format_option("table", "csv", "json")
def loo(qrels_path, runs, workspace, pool_name, measures, depth, rel_level, fmt) -> None:
    """Leave-one-run-out: is the collection safe to reuse for systems that were not pooled?

    Each RUN is scored again without the judgments of the documents only it contributed; the table
    shows its score, the drop and its rank before and after. The verdict: safe when, for every
    measure, Kendall tau of the system ranking >= 0.9 and the largest relative drop < 5%.
    With -w, the stored pool's runs at the pool's depth are used (a different --depth is warned about).

    \b
    Example:
      trecbench pool loo --qrels qrels.txt bm25.txt dense.txt splade.txt -m nDCG@10 -m R@100
      trecbench pool loo -w mybench --pool depth-20
    """
    from trecbench.evaluation.retrieval.names import MeasureError
    from trecbench.pooling.loo import DEFAULT_MEASURES, leave_one_out, workspace_leave_one_out
    from trecbench.pooling.pool import DEFAULT_DEPTH

    if workspace and runs:
        raise click.UsageError("with -w the stored pool's runs are used: give -w or RUN files, not both")
    if not workspace and (len(runs) < 2 or not qrels_path):
        raise click.UsageError("leave-one-run-out needs --qrels and at least two RUN files (or -w BENCH)")
    try:
        if workspace:
            result = workspace_leave_one_out(workspace, measures or DEFAULT_MEASURES, pool=pool_name, qrels=qrels_path,
                                             depth=depth, rel_level=rel_level)
        else:
            result = leave_one_out(qrels_path, list(runs), measures or DEFAULT_MEASURES, depth=depth or DEFAULT_DEPTH,
                                   rel_level=rel_level)
    except MeasureError as e:
        raise click.BadParameter(str(e), param_hint="'-m'") from None
    _problems(result.problems)
    table = result.runs.set_index(["run", "measure"])
    if fmt == "table":
        table = table.copy()
        for col in ("full", "left_out", "drop"):
            table[col] = table[col].map(lambda v: f"{v:.4f}")
        table["relative_drop"] = table["relative_drop"].map(lambda v: f"{v:.1%}")
    print_table(table, fmt)
    click.echo(result.verdict(), err=fmt != "table")


@pool.command()
@click.option("--qrels", "qrels_path", required=True, type=click.Path(dir_okay=False),
              help="Existing judgments to replay (TREC qrels).")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@strategy_choice(multiple=True, help="Strategy to replay. Repeatable. Default: depth mtf maxmean.")
@click.option("-k", "--depth", type=click.IntRange(min=1), default=100, show_default=True, help="Pool depth.")
@click.option("--at", "shares", multiple=True, type=click.FloatRange(0, 1, min_open=True),
              help="Share of each topic's pool judged at which to count (repeatable). Default: 0.1 0.25 0.5 1.")
@click.option("-l", "--rel-level", default=1, show_default=True, type=int, help="Lowest grade counted as relevant.")
@format_option("table", "csv", "json")
def simulate(qrels_path, runs, strategy, depth, shares, rel_level, fmt) -> None:
    """Replay existing qrels through strategies: relevant documents found per judgment spent.

    Each cell reads `relevant found / judgments (relevant per judgment)`, summed over the judged
    topics after the same share of each topic's pool. Documents the qrels do not list count as not relevant.

    \b
    Example:
      trecbench pool simulate --qrels qrels.txt bm25.txt dense.txt --strategy mtf --strategy maxmean --strategy depth
    """
    from trecbench.pooling.simulation import DEFAULT_AT, simulate as run_simulation, wide

    table, problems = run_simulation(qrels_path, list(runs), strategy or ("depth", "mtf", "maxmean"), depth=depth,
                                     at=sorted(shares) or DEFAULT_AT, rel_level=rel_level)
    _problems(problems)
    print_table(wide(table) if fmt == "table" else table.set_index("strategy"), fmt)


@pool.command("export-qrels")
@click.argument("pool_file", metavar="POOL", type=click.Path(dir_okay=False))
@click.option("--qrels", "qrels_path", required=True, type=click.Path(dir_okay=False),
              help="Judgments of the pool's representatives (TREC qrels).")
@click.option("-o", "--output", default="-", show_default=True, help="Qrels file to write.")
def export_qrels(pool_file, qrels_path, output) -> None:
    """Write qrels with each unjudged duplicate given its group's grade.

    The grade is the representative's, else the first judged member's (the rule `qrels export -w`
    follows too). A propagated grade is marked by `propagated` in the iteration column (which
    trec_eval ignores). The qrels are sorted by topic and docid.

    \b
    Example:
      trecbench pool export-qrels pool.tsv --qrels judged.txt -o qrels.txt
    """
    from trecbench.pooling.pool import read_pool
    from trecbench.qrels import read_qrels, write_qrels
    from trecbench.qrels.select import propagated_qrels

    full, propagated = propagated_qrels(read_qrels(qrels_path), read_pool(pool_file))
    with _output(output) as stream:
        write_qrels(full, stream)
    click.echo(f"{len(full)} judgments written, {propagated} propagated to duplicates", err=True)
