"""`trecbench judge llm`: grade the pool's candidates with a model."""
from __future__ import annotations

import sys

import click


@click.group("judge")
def judge() -> None:
    """Judge the pool's candidates (people judge in the web app: `trecbench serve`).

    \b
    Example:
      trecbench judge llm -w mybench --model openai/gpt-4o-mini
    """


@judge.command("llm")
@click.option("-w", "--workspace", required=True, type=click.Path(file_okay=False), help="Bench workspace.")
@click.option("--model", required=True, help="Any litellm model name (openai/gpt-4o-mini, hosted_vllm/..., ollama/...).")
@click.option("--api-base", "api_bases", multiple=True,
              help="Server URL (OpenAI-compatible, vLLM, Ollama ...); repeat to spread calls over several deployments.")
@click.option("--api-key", envvar="TRECBENCH_API_KEY", help="API key (default: the provider's usual variable).")
@click.option("--prompt", "prompt_spec", default=None,
              help="Built-in prompt name (graded-0-3, multi-criteria) or a file of instructions.")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(1, 50), help="Passages per call.")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 15),
              help="Calls per batch; the grade is their majority (a tie goes to the lower grade).")
@click.option("--examples", default=0, show_default=True, type=click.IntRange(0, 10),
              help="Few-shot examples drawn from people's judgments of other topics.")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 512), help="Calls in flight.")
@click.option("--rpm", type=float, default=None, help="At most this many calls start per minute.")
@click.option("--max-cost", type=float, default=None, help="Stop before spending more than this many dollars.")
@click.option("--temperature", type=float, default=None,
              help="Sampling temperature (default 0; 0.7 when --samples > 1).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request.")
@click.option("--max-retries", type=int, default=4, show_default=True, help="Retries on 429, 5xx and timeouts.")
@click.option("--limit", type=int, default=None, help="Judge at most this many documents in this run.")
@click.option("--pool", "pool_name", default=None, help="Pool to judge (default: the newest).")
@click.option("--relevant-grade", default=1, show_default=True, type=int,
              help="Adaptive pools (mtf, maxmean): the grade from which a document counts as relevant.")
@click.option("--dry-run", is_flag=True, help="Count the calls, tokens and dollars it would take; call nothing.")
@click.option("--provider-batch", is_flag=True,
              help="Send the requests through the provider's batch interface (about half the price, within 24 h); "
                   "run the same command again to collect the results. See docs/judge-batch.md.")
@click.option("--collect", is_flag=True,
              help="Only collect finished provider batches and apply their results; submit nothing new.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def llm(workspace, model, api_bases, api_key, prompt_spec, batch, samples, examples, concurrency, rpm, max_cost,
        temperature, timeout, max_retries, limit, pool_name, relevant_grade, dry_run, provider_batch, collect,
        quiet) -> None:
    """Grade the pool's unjudged candidates 0-3 with MODEL; each judgment is saved as it arrives.

    Re-running judges only what is missing (replies are cached in the workspace, so nothing is paid
    twice). An adaptive pool (mtf, maxmean) chooses each next document from the grades so far and
    stops each topic at the pool's budget. A reply that cannot be read is re-asked, then recorded as a failure —
    never as a grade — and failures are listed at the end with exit status 1. Ctrl-C keeps every finished judgment.

    \b
    Example:
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --max-cost 2
      trecbench judge llm -w mybench --model hosted_vllm/qwen2.5-7b --api-base http://gpu1:8000/v1 \\
          --api-base http://gpu2:8000/v1 --concurrency 32
      trecbench judge llm -w mybench --model openai/gpt-4o --dry-run
      trecbench pool runs/*.txt --strategy mtf --budget 30 -w mybench --name mtf30
      trecbench judge llm -w mybench --pool mtf30 --model openai/gpt-4o-mini
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --provider-batch   # submit
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --provider-batch   # later: collect
    """

    from trecbench.llm import LLM, Budget, ModelConfig
    from trecbench.qrels.judges.llm import (candidates, few_shot_examples, judge as run_judge, judge_adaptive,
                                            model_judge, plan_tasks)
    from trecbench.pooling.workspace import is_adaptive, resume_adaptive
    from trecbench.qrels.judges.prompts import load_prompt
    from trecbench.store import Workspace

    ws = Workspace(workspace)
    prompt = load_prompt(prompt_spec)
    temp = temperature if temperature is not None else (0.7 if samples > 1 else 0.0)
    params = {"temperature": temp}
    deployments = [{"model": model, "api_base": b, **({"api_key": api_key} if api_key else {})}
                   for b in api_bases] if len(api_bases) > 1 else None
    config = ModelConfig(model, api_base=api_bases[0] if len(api_bases) == 1 else None, api_key=api_key,
                         params=params, timeout=timeout, max_retries=max_retries, deployments=deployments,
                         concurrency=concurrency, rpm=rpm)
    identity = model_judge(model, prompt, batch=batch, samples=samples, params=params)
    pool = candidates(ws, pool_name)
    adaptive = is_adaptive(pool.attrs.get("strategy"))
    provider_batch = provider_batch or collect
    if provider_batch and (adaptive or dry_run):
        raise click.UsageError("--provider-batch/--collect judge a ranked pool for real: not with an adaptive pool "
                               "(it picks one document at a time) or --dry-run")
    if adaptive:
        if batch > 1:
            raise click.UsageError("an adaptive pool picks one document at a time: --batch must be 1")
        resumed = resume_adaptive(ws, identity.name, pool_name, limit=limit)
        adaptive_pool, graded, total, info = resumed.pool, resumed.done, resumed.remaining, resumed.pool.info
        tasks, skipped = [], len(graded)
    else:
        tasks, skipped = plan_tasks(pool, ws.judged_pairs(identity), batch, limit)
        total = sum(len(t.docids) for t in tasks)
    corpus = ws.corpus()
    shots = few_shot_examples(ws, examples, corpus, ws.topics())
    client = LLM(config, cache=ws.path / "bench.sqlite", budget=Budget(max_cost) if max_cost else None,
                 dry_run=dry_run)
    if adaptive:
        click.echo(f"judge {identity.name} (prompt sha256 {prompt.sha256[:12]}): adaptive pool "
                   f"{pool.attrs.get('name')!r} ({pool.attrs.get('strategy')}), up to {total} documents; "
                   f"{skipped} already judged", err=True)
    else:
        click.echo(f"judge {identity.name} (prompt sha256 {prompt.sha256[:12]}): {total} documents to judge "
                   f"in {len(tasks)} calls x {samples} sample(s); {skipped} already judged", err=True)
    bar = None
    if not quiet and not dry_run and total:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="doc", file=sys.stderr, dynamic_ncols=True)

    def progress(report, n) -> None:
        if bar is not None:
            bar.update(n)
            bar.set_postfix_str(f"judged {report.judged} failed {len(report.failed)} "
                                f"tokens {report.prompt_tokens + report.completion_tokens} ${report.cost:.4f}")

    try:
        if adaptive:
            report = client.run(judge_adaptive(ws, client, prompt, adaptive_pool, identity, budget=info.budget,
                                                relevant_grade=relevant_grade, samples=samples, examples=shots,
                                                corpus=corpus, done=graded, on_progress=progress))
            skipped = report.skipped
        elif provider_batch:
            from trecbench.llm import LLMError
            from trecbench.qrels.judges.batch import judge_batched

            try:
                batched = client.run(judge_batched(ws, client, prompt, tasks, identity, samples=samples,
                                                   examples=shots, corpus=corpus, submit=not collect,
                                                   on_progress=progress))
            except LLMError as e:
                raise click.ClickException(str(e)) from None
            report = batched.report
        else:
            report = client.run(run_judge(ws, client, prompt, tasks, identity, samples=samples, examples=shots,
                                           corpus=corpus, on_progress=progress))
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        done = len(ws.judged_pairs(identity))
        click.echo(f"\ninterrupted: every finished judgment is saved ({done} by this judge); "
                   "run the same command to continue", err=True)
        sys.exit(130)
    finally:
        client.close()
    if bar is not None:
        bar.close()
    if dry_run:
        from trecbench.cli.common import describe_plan

        click.echo(describe_plan(client.plan))
        return
    click.echo(f"judged {report.judged}, failed {len(report.failed)}, skipped {skipped} already judged; "
               f"{report.calls} calls ({report.cached} from cache), {report.prompt_tokens} input + "
               f"{report.completion_tokens} output tokens, ${report.cost:.4f}")
    if provider_batch:
        click.echo(_describe_batches(batched))
    if report.stopped:
        click.echo(f"stopped early: {report.stopped}", err=True)
    if report.failed:
        click.echo(f"{len(report.failed)} judgment(s) failed (recorded as failures, not grades; "
                   "run again to retry them):", err=True)
        for qid, docid, why in report.failed:
            click.echo(f"  {qid}\t{docid}\t{why}", err=True)
        sys.exit(1)
    if report.stopped:
        sys.exit(3)


def _describe_batches(b) -> str:
    """What happened to the provider batches in this run (`trecbench.qrels.judges.batch.BatchReport`)."""
    lines = [f"batch {bid} collected: {n} replies read, ${cost:.4f} at the batch price" for bid, n, cost in b.collected]
    lines += [f"batch {bid} found again (its id had not been saved)" for bid in b.found_again]
    lines += [f"batch {bid} is {status} ({done} of {total} done)" for bid, status, done, total in b.waiting]
    if b.submitted:
        lines.append(f"batch {b.submitted[0]} submitted: {b.submitted[1]} requests")
    if b.waiting_docs:
        lines.append(f"{b.waiting_docs} documents wait for a batch: run the same command again to collect it")
    return "\n".join(lines) if lines else "no provider batch to collect or submit"


from trecbench.cli.judge_validate import validate as _validate  # noqa: E402

judge.add_command(_validate)
