"""The assessor web app: topic list with progress, a judging page per (topic, document), login; the nugget
editing pages are in `trecbench.web.nuggets`, the support assessment pages (`/support`) in `trecbench.web.support`,
what they share in `trecbench.web.common`.

Pages are rendered on the server (Starlette + Jinja2, autoescaped); the only script is static/app.js,
which maps the keys 0-3 (the workspace's scale, `trecbench.llm.prompts.Scale`: its definitions are shown
beside the buttons, the words the model judge is given) to the grade buttons, n/p to the next/previous
buttons and s to the skip comment. Pages (GET) change nothing; every change is a same-origin POST with
the session's CSRF token: a grade (recorded at once as one judgment row of `Judge("human", assessor)`;
nothing is updated or deleted), a skip with a comment (`/skip`: a row of its own, never a grade), taking
the next pair (`/next`) or opening one (`/open`), both of which lease it. `/overview` is the organiser's.
When the store cannot be written (a full disk, read-only media) the assessor gets a page saying what was
NOT saved and why (`common.store_failed`).
"""
from __future__ import annotations

import functools
import hashlib
import socket
import sqlite3
from typing import Any, Iterable

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trecbench.store.workspace import SESSION_SECONDS, Judge, Judgment, Workspace, WorkspaceLike, as_workspace, text_hash
from trecbench.web import auth, nuggets, queries, support
from trecbench.web.common import (
    HERE,
    STORE_FAILURES,
    Bench,
    NotSaved,
    StoreFailures,
    bench_of,
    checked_form,
    field,
    href,
    macro,
    me,
    param,
    redirect,
    render,
)
from trecbench.web.highlight import highlight, query_terms


def create_app(workspace: WorkspaceLike, *, require_token: bool, double: bool = False,
               lease_seconds: float = queries.LEASE_SECONDS, pool: str | None = None, host: str = "127.0.0.1",
               allowed_hosts: Iterable[str] = (), throttle: auth.Throttle | None = None) -> Starlette:
    """The app for one workspace, served at `host` (a request naming another host is refused; `allowed_hosts`
    adds names, e.g. a reverse proxy's). `require_token` must be true whenever it listens beyond loopback;
    `pool` names the pool to judge (default: the newest)."""
    ws = as_workspace(workspace)
    ws.durable = True  # a person's grade is flushed to disk before the page says it is saved
    ws.pool(pool)  # an unknown pool is refused before anything listens
    bench = Bench(ws, require_token=require_token, double=double, lease_seconds=lease_seconds, pool=pool)
    secret = auth.session_secret(ws)
    cookie = "trecbench_" + hashlib.sha256(secret.encode()).hexdigest()[:8]  # two benches on one host keep apart
    extra = frozenset(h.lower().strip("[]") for h in allowed_hosts)
    throttle = throttle or auth.Throttle()
    app = Starlette(
        routes=[
            Route("/", topics_page),
            Route("/topic", topic_page),
            Route("/next", next_pair, methods=["POST"]),
            Route("/open", open_pair, methods=["POST"]),
            Route("/judge", judge_page, methods=["GET"]),
            Route("/judge", judge_post, methods=["POST"]),
            Route("/skip", skip_post, methods=["POST"]),
            Route("/overview", overview_page),
            Route("/login", login_page, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"]),
            *nuggets.routes(),
            *support.routes(),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[
            Middleware(auth.Gate, hosts=auth.allowed_hosts(host, extra), extra=extra),
            Middleware(StoreFailures),
            Middleware(SessionMiddleware, secret_key=secret, session_cookie=cookie, same_site="lax",
                       max_age=SESSION_SECONDS),
            Middleware(auth.Guard, ws=ws, require_token=require_token, throttle=throttle, confirm=confirm_login_page),
        ],
        # a store that cannot be written (a full disk, read-only media): a page saying what was not saved
        exception_handlers=STORE_FAILURES,
    )
    app.state.bench = bench
    app.state.throttle = throttle
    return app


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on `host`:`port`, bound before anyone is told the URL (so the URL printed is ours).

    Raises OSError when the address cannot be had: EADDRINUSE when another program listens on the port,
    socket.gaierror when the host name does not resolve."""
    # as uvicorn binds (its Config.bind_socket): IPv6 for an address with a colon, IPv4 for any other (so
    # `localhost` is 127.0.0.1); a port left in TIME_WAIT by our last run is free, one another program listens on is not
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


def serve(workspace: WorkspaceLike, *, host: str = "127.0.0.1", port: int = 8000, double: bool = False,
          require_token: bool | None = None, pool: str | None = None, allowed_hosts: Iterable[str] = (),
          proxies: Iterable[str] = (), sock: socket.socket | None = None) -> None:
    """Run the app with uvicorn until interrupted; tokens are required unless bound to a loopback address.

    `proxies` are the addresses (or networks) of the reverse proxies in front: only a connection from one
    of them may name the client in `X-Forwarded-For` (what wrong tokens are throttled by); without them the
    header is ignored, whoever sends it (uvicorn would otherwise believe any loopback connection).
    `sock` is the socket `listen` bound (None: bound here)."""
    import logging

    import uvicorn

    needs_token = not auth.is_loopback(host) if require_token is None else require_token
    app = create_app(workspace, require_token=needs_token, double=double, pool=pool, host=host,
                     allowed_hosts=allowed_hosts)
    bench: Bench = app.state.bench
    judged = bench.pool()
    if judged is not None:  # count the topic list once now, not in the first assessor's request
        bench.tally.progress(bench.ws, judged, auth.LOCAL)
    trusted = list(proxies)
    config = uvicorn.Config(app, host=host, port=port, log_level="info", proxy_headers=bool(trusted),
                            forwarded_allow_ips=trusted or None)
    logging.getLogger("uvicorn.access").addFilter(auth.hide_tokens)  # after Config, which sets up logging
    uvicorn.Server(config).run(sockets=[sock or listen(host, port)])


# ---- pages (plain functions: Starlette runs them in its thread pool, each thread with its own connection) ----

def topics_page(request: Request) -> Response:
    bench, who = bench_of(request), me(request)
    pool = bench.pool()
    rows = bench.tally.progress(bench.ws, pool, who) if pool else []
    return render(request, "topics.html", pool=pool, rows=rows, bench_path=str(bench.ws.path), href=href)


def topic_page(request: Request) -> Response:
    bench, who = bench_of(request), me(request)
    qid = param(request, "qid")
    pool = bench.pool()
    if pool is None:
        return redirect("/")
    state = bench.topics.state(bench.ws, pool, qid)
    if not state.docs:
        raise HTTPException(404, f"topic {qid!r} is not in pool {pool.name!r}")
    row = macro("topic_row.html", "row")
    rows = []
    for index, docid in enumerate(state.docs, start=1):
        others, holders = _others(state, docid, who)
        shown = (index, docid, state.is_visible(docid, who, bench.per_pair), state.grade_of(docid, who), len(others),
                 holders)
        # a topic has up to thousands of rows and a request changes one or two: each is rendered once (as
        # Markup, so joining them needs no escaping)
        rows.append(bench.memo(("topic row", qid, docid), shown, functools.partial(row, *shown)))
    topic = bench.ws.topic_text(qid)
    return render(request, "topic.html", qid=qid, topic=topic, rows=Markup("\n".join(rows)), total=len(state.docs),
                  complete=state.complete(bench.per_pair),
                  mine=state.mine(who), finished=request.query_params.get("finished") == "1", href=href, grades=bench.scale.names,
                  nuggets_href=nuggets.topic_url(qid))


def _others(state: queries.TopicState, docid: str, who: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the other people who judged the pair, those who hold a lease on it and have not judged it), sorted."""
    judged, leased = state.grades.get(docid), state.leases.get(docid)
    others = tuple(sorted(judged.keys() - {who})) if judged else ()
    holders = tuple(sorted(leased - {who} - set(others))) if leased else ()
    return others, holders


async def next_pair(request: Request) -> Response:
    """Lease the assessor's next open pair of a topic (after `after`) and show it; the topic page when none is left."""
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)
    qid = field(form, "qid")
    if not qid:
        raise HTTPException(400, "missing field 'qid'")
    return await run_in_threadpool(_next, bench, who, qid, field(form, "after"))


def _next(bench: Bench, who: str, qid: str, after: str | None) -> Response:
    pool = bench.pool()
    if pool is None:
        return redirect("/")
    docid = queries.take_next(bench.ws, bench.topics, pool, qid, who, bench.per_pair, after=after,
                              lease_seconds=bench.lease_seconds)
    if docid is None:
        return redirect(href("/topic", qid=qid, finished="1"))
    return redirect(href("/judge", qid=qid, docid=docid))


async def open_pair(request: Request) -> Response:
    """The assessor goes to this pair (previous/next, or from the topic's list): lease it when it is open to
    them, drop the lease they held, and show it."""
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)
    qid, docid = field(form, "qid"), field(form, "docid")
    if not qid or not docid:
        raise HTTPException(400, "opening a document needs qid and docid")

    def run() -> None:
        pool = bench.pool()
        in_pool = pool is not None and queries.in_pool(bench.ws, pool, qid, docid)
        queries.hold(bench.ws, qid, docid if in_pool else None, who, bench.per_pair, lease_seconds=bench.lease_seconds,
                     since=pool.since if pool is not None else 0)

    await run_in_threadpool(run)
    return redirect(href("/judge", qid=qid, docid=docid))


def judge_page(request: Request) -> Response:
    bench, who = bench_of(request), me(request)
    qid, docid = param(request, "qid"), param(request, "docid")
    pool = bench.pool()
    if pool is None:
        return redirect("/")
    in_pool = queries.in_pool(bench.ws, pool, qid, docid)
    state = bench.topics.state(bench.ws, pool, qid)
    topic = bench.ws.topic_text(qid)
    doc, missing = bench.document(docid)
    terms = query_terms(topic[0]) if topic else []
    others, holders = _others(state, docid, who)
    from trecbench.judging.validate import is_blind

    blind = is_blind(bench.ws, pool.name)  # a validation sample is judged without seeing any model's grade
    change = _corpus_change(bench.ws, pool, qid, docid)
    show_suggestion = request.query_params.get("suggest") == "1" and not blind
    return render(
        request, "judge.html", qid=qid, docid=docid, topic=topic, doc=doc, missing=missing,
        title=highlight(doc.title, terms) if doc and doc.title else None,
        text=highlight(doc.text, terms) if doc else None,
        in_pool=in_pool, pool_name=pool.name, position=state.docs.index(docid) + 1 if docid in state.docs else None,
        total=len(state.docs), complete=state.complete(bench.per_pair), mine=state.mine(who),
        my_grade=state.grade_of(docid, who), others=len(others), holders=holders,
        prev_doc=state.neighbour(docid, who, bench.per_pair, -1),
        next_doc=state.neighbour(docid, who, bench.per_pair, +1),
        show_suggestion=show_suggestion,
        # read even when hidden: the link to show it is offered only when a model did judge the pair
        suggestion=None if blind else queries.model_suggestion(bench.ws, qid, docid),
        suggest_href=None if blind else href("/judge", qid=qid, docid=docid, suggest="1"),
        topic_href=href("/topic", qid=qid), grades=bench.scale.names, scale=bench.scale,
        change=change)


def _corpus_change(ws: Workspace, pool: Any, qid: str, docid: str) -> Any:
    """In a corpus update's review pool, what the update queued about this passage (the old text's word diff
    or the passages a span was cut into), shown beside it; None in any other pool."""
    from trecbench.judging.samples import CORPUS_REVIEW

    stored = ws.pool(pool.name)
    if stored is None or stored.strategy != CORPUS_REVIEW:
        return None
    from trecbench.versions.changes import change_for

    return change_for(ws, qid, docid)


async def judge_post(request: Request) -> Response:
    """Record the grade, then lease and show the assessor's next open pair of the topic."""
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)
    qid, docid, grade = field(form, "qid"), field(form, "docid"), field(form, "grade")
    names = bench.scale.names
    if not qid or not docid or grade not in {str(g) for g in names}:
        raise HTTPException(400, f"a judgment needs qid, docid and a grade 0-{bench.scale.max_grade}")
    await run_in_threadpool(_record, bench, who, qid, docid, int(grade))
    try:
        return await run_in_threadpool(_next, bench, who, qid, docid)
    except sqlite3.Error as e:  # the grade is kept; leasing the next pair is what failed
        raise NotSaved(f"Your grade {grade} ({names[int(grade)]}) of document {docid} for topic {qid} was saved, "
                       "but the next document could not be given to you", e, back=href("/topic", qid=qid),
                       heading="Saved, but no next document") from None


def _record(bench: Bench, who: str, qid: str, docid: str, grade: int) -> None:
    """One judgment of a pair of the pool being judged; anything else is refused (nothing is recorded)."""
    if not bench.ws.known_topic(qid):
        raise HTTPException(404, f"no topic {qid!r}")
    pool = bench.pool()
    if pool is None or not queries.in_pool(bench.ws, pool, qid, docid):
        where = f"pool {pool.name!r}" if pool else "any pool"
        raise HTTPException(409, f"document {docid!r} is not in {where} for topic {qid!r}: only the pool's "
                                 "documents are judged here")
    doc, missing = bench.document(docid)
    if doc is None:
        raise HTTPException(404, missing)
    try:
        with bench.ws.transaction():  # one commit (one flush to disk) for the grade and the lease it ends
            bench.ws.record(Judgment(qid, docid, grade, Judge("human", who), doc_hash=text_hash(doc.text)))
            queries.release(bench.ws, qid, docid, who)
    except sqlite3.Error as e:  # rolled back: the assessor must know that this grade is not recorded
        raise NotSaved(f"Your grade {grade} ({bench.scale.names[grade]}) of document {docid} for topic {qid} was NOT saved", e,
                       back=href("/judge", qid=qid, docid=docid)) from None


COMMENT_CHARS = 2000  # a skip's comment is a note to the organiser, not a document


async def skip_post(request: Request) -> Response:
    """The assessor cannot decide: keep the skip and their comment (no grade is recorded), drop their lease
    and show their next open pair of the topic (the topic page when the skipped pair is all that is left)."""
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)
    qid, docid = field(form, "qid"), field(form, "docid")
    comment = " ".join((field(form, "comment") or "").split())
    if not qid or not docid:
        raise HTTPException(400, "a skip needs qid and docid")
    if len(comment) > COMMENT_CHARS:
        raise HTTPException(400, f"a comment is at most {COMMENT_CHARS} characters")

    def run() -> Response:
        pool = bench.pool()
        if pool is None or not queries.in_pool(bench.ws, pool, qid, docid):
            raise HTTPException(409, f"document {docid!r} is not in the pool being judged for topic {qid!r}")
        try:
            with bench.ws.transaction():
                bench.ws.record_skip(qid, docid, who, comment)
                queries.release(bench.ws, qid, docid, who)
        except sqlite3.Error as e:
            raise NotSaved(f"Your skip of document {docid} for topic {qid} was NOT saved", e,
                           back=href("/judge", qid=qid, docid=docid)) from None
        following = queries.take_next(bench.ws, bench.topics, pool, qid, who, bench.per_pair, after=docid,
                                      lease_seconds=bench.lease_seconds)
        if following is None or following == docid:  # only the skipped pair is left: not offered again at once
            queries.release(bench.ws, qid, docid, who)
            return redirect(href("/topic", qid=qid, finished="1"))
        return redirect(href("/judge", qid=qid, docid=following))

    return await run_in_threadpool(run)


def overview_page(request: Request) -> Response:
    """The organiser's view of the pool being judged: who judged how much, leases held now, agreement between
    people on the pairs two of them judged, what is left per topic, and the comments of skipped pairs."""
    bench, who = bench_of(request), me(request)
    pool = bench.pool()
    if pool is None:
        return redirect("/")
    view = queries.overview(bench.ws, bench.topics, bench.tally.progress(bench.ws, pool, who), pool, bench.per_pair)
    return render(request, "overview.html", pool=pool, view=view, href=href)


async def login_page(request: Request) -> Response:
    bench = bench_of(request)
    error = "That token is not valid." if request.query_params.get("failed") == "1" else None
    target = auth.safe_path(request.query_params.get("next", "/"))
    if request.method == "POST":
        form = await checked_form(request)
        token, name = (field(form, "token") or "").strip(), (field(form, "name") or "").strip()
        target = auth.safe_path(field(form, "next") or "/")
        if token:
            throttle: auth.Throttle = request.app.state.throttle
            client = auth.client_of(request.scope)
            wait = throttle.wait(client)
            if wait > 0:
                return auth.too_many(wait)
            found = await run_in_threadpool(bench.ws.assessor_for_token, token)
            if found:
                await run_in_threadpool(auth.log_in, bench.ws, request.session, found, via="token")
                return redirect(target)
            throttle.failed(client)
            error = "That token is not valid."
        elif name and not bench.require_token:
            if auth.valid_name(name):
                await run_in_threadpool(auth.log_in, bench.ws, request.session, name, via="local")
                return redirect(target)
            error = "A name is up to 64 characters without spaces."
        else:
            error = "Enter your token." if bench.require_token else "Enter your name or token."
    # who is logged in is not shown here: the page is for logging in (or in as someone else)
    return render(request, "login.html", status_code=401 if error else 200, error=error, next=target, assessor=None)


def confirm_login_page(request: Request, name: str, token: str, target: str) -> Response:
    """Asks before a `?token=` link another site may have sent the browser to logs in as `name` (the Guard
    calls it; see `auth.token_login_at_once`): the button posts the token to /login from this site."""
    return render(request, "confirm_login.html", login_as=name, token=token, next=target)


async def logout(request: Request) -> Response:
    await checked_form(request)
    await run_in_threadpool(auth.log_out, bench_of(request).ws, request.session)
    return redirect("/login")
