"""The assessor web app: topic list with progress, a judging page per (topic, document), login; the nugget
editing pages are in `trecbench.web.nuggets`.

Pages are rendered on the server (Starlette + Jinja2, autoescaped); the only script is static/app.js,
which maps the keys 0-3 to the grade buttons and n/p to the next/previous links. Each grade posted is
recorded at once as one judgment row of `Judge("human", assessor)`; nothing is updated or deleted.
"""
from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from trecbench.errors import InputError
from trecbench.store.workspace import Judge, Judgment, Workspace, text_hash
from trecbench.web import auth, queries
from trecbench.web.highlight import highlight, query_terms

HERE = Path(__file__).resolve().parent
GRADES = {0: "not relevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}


class Bench:
    """What the routes share: the workspace (one SQLite connection per thread), its corpus and the options."""

    def __init__(self, ws: Workspace, *, require_token: bool, double: bool, lease_seconds: float,
                 pool: str | None = None):
        self.ws = ws
        self.pool_name = pool  # None: the newest pool
        self.require_token = require_token
        self.per_pair = 2 if double else 1
        self.lease_seconds = lease_seconds
        self._corpus: Any = None
        self._corpus_lock = threading.Lock()
        self.nugget_store: Any = None  # made on first use by trecbench.web.nuggets.store()

    def pool(self) -> queries.Pool | None:
        return queries.serving_pool(self.ws, self.pool_name)

    def document(self, docid: str):
        """(Document or None, why there is none)."""
        with self._corpus_lock:  # opening scans or loads the offset index: once, not once per request
            if self._corpus is None:
                try:
                    self._corpus = self.ws.corpus()
                except InputError as e:
                    return None, str(e)
        doc = self._corpus.get(docid)
        return (doc, None) if doc is not None else (None, f"the corpus has no document {docid!r}")


def create_app(workspace: str | os.PathLike | Workspace, *, require_token: bool, double: bool = False,
               lease_seconds: float = queries.LEASE_SECONDS, pool: str | None = None) -> Starlette:
    """The app for one workspace. `require_token` must be true whenever it listens beyond loopback; `pool`
    names the pool to judge (default: the newest)."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    ws.pool(pool)  # an unknown pool is refused before anything listens
    bench = Bench(ws, require_token=require_token, double=double, lease_seconds=lease_seconds, pool=pool)
    secret = auth.session_secret(ws)
    cookie = "trecbench_" + hashlib.sha256(secret.encode()).hexdigest()[:8]  # two benches on one host keep apart
    from trecbench.web import nuggets  # here, not at the top: it uses this module's helpers

    app = Starlette(
        routes=[
            Route("/", topics_page),
            Route("/topic", topic_page),
            Route("/next", next_pair),
            Route("/judge", judge_page, methods=["GET"]),
            Route("/judge", judge_post, methods=["POST"]),
            Route("/login", login_page, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"]),
            *nuggets.routes(),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[
            Middleware(SessionMiddleware, secret_key=secret, session_cookie=cookie, same_site="lax"),
            Middleware(auth.Guard, ws=ws, require_token=require_token),
        ],
    )
    app.state.bench = bench
    return app


def serve(workspace: str | os.PathLike | Workspace, *, host: str = "127.0.0.1", port: int = 8000, double: bool = False,
          require_token: bool | None = None, pool: str | None = None) -> None:
    """Run the app with uvicorn until interrupted; tokens are required unless bound to a loopback address."""
    import logging

    import uvicorn

    needs_token = not auth.is_loopback(host) if require_token is None else require_token
    config = uvicorn.Config(create_app(workspace, require_token=needs_token, double=double, pool=pool), host=host,
                            port=port, log_level="info")
    logging.getLogger("uvicorn.access").addFilter(auth.hide_tokens)  # after Config, which sets up logging
    uvicorn.Server(config).run()


# ---- helpers ----

templates = Jinja2Templates(env=jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                                                   autoescape=True))


def _bench(request: Request) -> Bench:
    return request.app.state.bench


def _me(request: Request) -> str:
    name = auth.assessor(request.session, _bench(request).require_token)
    if name is None:  # the Guard lets no such request through, but a route must never judge as nobody
        raise HTTPException(401)
    return name


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    bench = _bench(request)
    context.update(request=request, nonce=request.state.nonce, csrf=request.session.get("csrf", ""),
                   assessor=auth.assessor(request.session, bench.require_token), bench_name=bench.ws.settings.name,
                   double=bench.per_pair > 1, require_token=bench.require_token)
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def href(path: str, **params: str) -> str:
    return path + "?" + urlencode(params)


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _param(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if not value:
        raise HTTPException(400, f"missing parameter {name!r}")
    return value


# ---- pages (plain functions: Starlette runs them in its thread pool, each thread with its own connection) ----

def topics_page(request: Request) -> Response:
    bench, me = _bench(request), _me(request)
    pool = bench.pool()
    rows = queries.progress(bench.ws, pool, me, bench.per_pair) if pool else []
    return render(request, "topics.html", pool=pool, rows=rows, bench_path=str(bench.ws.path), href=href)


def topic_page(request: Request) -> Response:
    bench, me = _bench(request), _me(request)
    qid = _param(request, "qid")
    pool = bench.pool()
    if pool is None:
        return _redirect("/")
    state = queries.topic_state(bench.ws, pool, qid)
    if not state.docs:
        raise HTTPException(404, f"topic {qid!r} is not in pool {pool.name!r}")
    docs = []
    for docid in state.docs:
        others = sorted(set(state.grades.get(docid, {})) - {me})
        holders = sorted(state.leases.get(docid, set()) - {me} - set(others))
        docs.append(dict(docid=docid, mine=state.grade_of(docid, me), others=len(others), holders=holders,
                         visible=state.is_visible(docid, me, bench.per_pair)))
    topic = queries.topic_text(bench.ws, qid)
    return render(request, "topic.html", qid=qid, topic=topic, docs=docs, complete=state.complete(bench.per_pair),
                  mine=state.mine(me), finished=request.query_params.get("finished") == "1", href=href, grades=GRADES)


def next_pair(request: Request) -> Response:
    """Lease the assessor's next open pair of a topic and show it; the topic page when none is left."""
    bench, me = _bench(request), _me(request)
    qid = _param(request, "qid")
    pool = bench.pool()
    if pool is None:
        return _redirect("/")
    docid = queries.take_next(bench.ws, pool, qid, me, bench.per_pair, after=request.query_params.get("after"),
                              lease_seconds=bench.lease_seconds)
    if docid is None:
        return _redirect(href("/topic", qid=qid, finished="1"))
    return _redirect(href("/judge", qid=qid, docid=docid))


def judge_page(request: Request) -> Response:
    bench, me = _bench(request), _me(request)
    qid, docid = _param(request, "qid"), _param(request, "docid")
    pool = bench.pool()
    if pool is None:
        return _redirect("/")
    in_pool = queries.in_pool(bench.ws, pool, qid, docid)
    held = in_pool and queries.hold(bench.ws, qid, docid, me, bench.per_pair, lease_seconds=bench.lease_seconds)
    state = queries.topic_state(bench.ws, pool, qid)
    topic = queries.topic_text(bench.ws, qid)
    doc, missing = bench.document(docid)
    terms = query_terms(topic[0]) if topic else []
    others = sorted(set(state.grades.get(docid, {})) - {me})
    holders = sorted(state.leases.get(docid, set()) - {me} - set(others))
    prev_doc = state.neighbour(docid, me, bench.per_pair, -1)
    next_doc = state.neighbour(docid, me, bench.per_pair, +1)
    from trecbench.qrels.validate import is_blind

    blind = is_blind(bench.ws, pool.name)  # a validation sample is judged without seeing any model's grade
    show_suggestion = request.query_params.get("suggest") == "1" and not blind
    return render(
        request, "judge.html", qid=qid, docid=docid, topic=topic, doc=doc, missing=missing,
        title=highlight(doc.title, terms) if doc and doc.title else None,
        text=highlight(doc.text, terms) if doc else None,
        in_pool=in_pool, position=state.docs.index(docid) + 1 if docid in state.docs else None,
        total=len(state.docs), complete=state.complete(bench.per_pair), mine=state.mine(me),
        my_grade=state.grade_of(docid, me), others=len(others), holders=holders, held=held,
        prev_href=href("/judge", qid=qid, docid=prev_doc) if prev_doc else None,
        next_href=href("/judge", qid=qid, docid=next_doc) if next_doc else href("/next", qid=qid, after=docid),
        show_suggestion=show_suggestion,
        suggestion=queries.model_suggestion(bench.ws, qid, docid) if show_suggestion else None,
        suggest_href=None if blind else href("/judge", qid=qid, docid=docid, suggest="1"),
        topic_href=href("/topic", qid=qid), grades=GRADES)


async def judge_post(request: Request) -> Response:
    form = await _checked_form(request)
    bench, me = _bench(request), _me(request)
    qid, docid, grade = form.get("qid"), form.get("docid"), form.get("grade")
    if not isinstance(qid, str) or not isinstance(docid, str) or grade not in {str(g) for g in GRADES}:
        raise HTTPException(400, "a judgment needs qid, docid and a grade 0-3")
    await run_in_threadpool(_record, bench, me, qid, docid, int(grade))
    return _redirect(href("/next", qid=qid, after=docid))


def _record(bench: Bench, me: str, qid: str, docid: str, grade: int) -> None:
    if not queries.known_topic(bench.ws, qid):
        raise HTTPException(404, f"no topic {qid!r}")
    doc, missing = bench.document(docid)
    if doc is None:
        raise HTTPException(404, missing)
    bench.ws.record(Judgment(qid, docid, grade, Judge("human", me), doc_hash=text_hash(doc.text)))
    queries.release(bench.ws, qid, docid, me)


async def _checked_form(request: Request):
    form = await request.form()
    if not auth.csrf_ok(request.session, form.get("csrf")):
        raise HTTPException(403, "the form is stale or was not sent by this site (CSRF check failed): reload the page")
    return form


async def login_page(request: Request) -> Response:
    bench = _bench(request)
    error = "That token is not valid." if request.query_params.get("failed") == "1" else None
    target = _safe_next(request.query_params.get("next", "/"))
    if request.method == "POST":
        form = await _checked_form(request)
        token, name = str(form.get("token") or "").strip(), str(form.get("name") or "").strip()
        target = _safe_next(str(form.get("next") or "/"))
        if token:
            found = await run_in_threadpool(bench.ws.assessor_for_token, token)
            if found:
                auth.log_in(request.session, found, via="token")
                return _redirect(target)
            error = "That token is not valid."
        elif name and not bench.require_token:
            if auth.valid_name(name):
                auth.log_in(request.session, name, via="local")
                return _redirect(target)
            error = "A name is up to 64 characters without spaces."
        else:
            error = "Enter your token." if bench.require_token else "Enter your name or token."
    return render(request, "login.html", status_code=401 if error else 200, error=error, next=target)


async def logout(request: Request) -> Response:
    await _checked_form(request)
    request.session.clear()
    return _redirect("/login")


def _safe_next(target: str) -> str:
    """Only a path on this site (never `//host` or a scheme), so login cannot send anyone elsewhere."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"
