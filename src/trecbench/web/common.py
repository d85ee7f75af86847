"""What every page of the assessor app shares: the bench (workspace, corpus, options), rendering, URLs,
request parameters and checked forms. Both `trecbench.web.app` (judging) and `trecbench.web.nuggets`
(nugget editing) build on this module; neither imports the other's pages.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from trecbench.errors import InputError
from trecbench.llm.prompts import DEFAULT_SCALE, Scale
from trecbench.store.workspace import Workspace
from trecbench.web import auth
from trecbench.web.queries import Pool, Tally, Topics, serving_pool

HERE = Path(__file__).resolve().parent
GRADES = DEFAULT_SCALE.names  # the default scale's buttons; a workspace's own scale is `Bench.scale`
# Form fields that may be sent more than once (ticked checkboxes); any other field sent twice is refused,
# so that `grade=99&grade=1` never means whichever copy a parser happens to keep.
LIST_FIELDS = frozenset({"nid", "docid"})
T = TypeVar("T")


class Bench:
    """What the routes share: the workspace (one SQLite connection per thread), its corpus and the options."""

    def __init__(self, ws: Workspace, *, require_token: bool, double: bool, lease_seconds: float,
                 pool: str | None = None):
        self.ws = ws
        self.pool_name = pool  # None: the newest pool
        self.require_token = require_token
        self.per_pair = 2 if double else 1
        self.lease_seconds = lease_seconds
        self.scale: Scale = ws.settings.scale  # the grades people give, with the words the model is given
        self._source = ws.corpus_source  # resolved once: it is read for every document shown
        self._corpus: Any = None
        self._corpus_stamp: tuple | None = None
        self._corpus_lock = threading.Lock()
        self._nugget_store: Any = None
        self._nugget_stamp: tuple | None = None
        self.tally = Tally(self.per_pair)
        self.topics = Topics()
        self._memo: dict[tuple, tuple[tuple, Any]] = {}  # views kept until what they show changes (`memo`)
        self._grade_rows: dict[str, tuple] = {}  # each topic's judgment rows read so far (`relevant`)

    def pool(self) -> Pool | None:
        """The pool being judged (--pool, else the newest)."""
        return serving_pool(self.ws, self.pool_name)

    def corpus_version(self) -> tuple | None:
        """The corpus file's size and modification time (None for a corpus that is not a file)."""
        source = self._source
        if not source or source.startswith("irds:"):
            return None
        try:
            st = os.stat(source)
        except OSError:
            return ("missing",)
        return (st.st_size, st.st_mtime_ns)

    def corpus(self):
        """The workspace's corpus, opened again when its file changed since it was opened (the server keeps
        running while someone fixes or extends the corpus); raises InputError when it cannot be read."""
        stamp = self.corpus_version()
        opened = self._corpus  # read once: another thread may replace it meanwhile
        if opened is not None and stamp == self._corpus_stamp:
            return opened
        with self._corpus_lock:  # opening scans or loads the offset index: once per version of the file
            if self._corpus is None or stamp != self._corpus_stamp:
                self._corpus = None
                self._corpus = self.ws.corpus()
                self._corpus_stamp = stamp
            return self._corpus

    def document(self, docid: str):
        """(Document or None, why there is none)."""
        try:
            corpus = self.corpus()
        except InputError as e:
            return None, str(e)
        doc = corpus.get(docid)
        return (doc, None) if doc is not None else (None, f"the corpus has no document {docid!r}")

    def topic_version(self, qid: str) -> tuple:
        """What a topic's derived views depend on: its newest judgment (rows are only added, so a new id
        tells that something changed) and the corpus file's version."""
        return (self.ws.newest_judgment(qid), self.corpus_version())

    def memo(self, key: tuple, version: tuple, make: Callable[[], T]) -> T:
        """`make()`, kept under `key` until `version` changes (one version per key: per topic, not a cache
        that grows)."""
        found = self._memo.get(key)
        if found is None or found[0] != version:
            found = (version, make())
            self._memo[key] = found
        return found[1]

    def relevant(self, qid: str) -> list[tuple[str, int]]:
        """The topic's judged-relevant (docid, grade), as nugget linking offers them (`relevant_by_topic`);
        chosen again only when the topic has a judgment it did not have before, from the rows kept so far
        and those recorded since (rows are only added; a workspace whose newest row is older than the kept
        ones is read again in full)."""
        from trecbench.nuggets.relevant import relevant_in_rows

        version = self.topic_version(qid)

        def make() -> list[tuple[str, int]]:
            kept = self._grade_rows.get(qid, ())
            newest = max((r[0] for r in kept), default=0)
            if newest > version[0]:
                kept, newest = (), 0
            # a new tuple, never one changed in place: another thread may be reading the kept one
            rows = kept + tuple(self.ws.grade_rows(qid=qid, after=newest))
            self._grade_rows[qid] = rows
            return relevant_in_rows(rows).get(qid, [])

        return self.memo(("relevant", qid), version, make)

    def nugget_store(self):
        """The workspace's NuggetStore, made again when the corpus changed (it hashes linked documents)."""
        with self._corpus_lock:
            stamp = self.corpus_version()
            if self._nugget_store is None or stamp != self._nugget_stamp:
                from trecbench.nuggets.store import NuggetStore

                self._nugget_store = NuggetStore(self.ws)
                self._nugget_stamp = stamp
            return self._nugget_store


templates = Jinja2Templates(env=jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                                                   autoescape=True))


def macro(template: str, name: str) -> Callable[..., Markup]:
    """A macro of a template file, to render a fragment of a page on its own (autoescaped like the pages)."""
    return getattr(templates.env.get_template(template).module, name)


def bench_of(request: Request) -> Bench:
    return request.app.state.bench


def me(request: Request) -> str:
    """The logged-in assessor; 401 when there is none (the Guard lets no such request through)."""
    name = auth.assessor(request.session, bench_of(request).require_token)
    if name is None:  # a route must never judge as nobody
        raise HTTPException(401)
    return name


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    bench = bench_of(request)
    context.setdefault("assessor", auth.assessor(request.session, bench.require_token))
    context.update(request=request, nonce=request.state.nonce, csrf=request.session.get("csrf", ""),
                   bench_name=bench.ws.settings.name, double=bench.per_pair > 1, require_token=bench.require_token)
    return templates.TemplateResponse(request, name, context, status_code=status_code)


class NotSaved(Exception):
    """A change the store could not make (a full disk, a read-only workspace): `what` says which, in the
    assessor's words, `back` where to try again; the page `store_failed` shows says so."""

    def __init__(self, what: str, error: sqlite3.Error, *, back: str | None = None, heading: str = "Not saved"):
        super().__init__(f"{what}: {error}")
        self.what, self.error, self.back, self.heading = what, error, back, heading


def store_failed(request: Request, exc: Exception) -> Response:
    """The page for a request the store failed (`NotSaved`, or any sqlite3.Error of a route): what was not
    saved (or shown), why and what to do; 507 when the disk is full, else 503. The server log gets one line."""
    from trecbench.store.schema import store_failure

    failure = store_failure(exc.error if isinstance(exc, NotSaved) else exc)
    if isinstance(exc, NotSaved):
        what, back, heading = exc.what, exc.back, exc.heading
    elif request.method in ("GET", "HEAD"):
        what, back, heading = "This page could not be shown", None, "Not shown"
    else:
        what, back, heading = "Your change was NOT saved", None, "Not saved"
    logging.getLogger("trecbench.web").error("%s %s: %s: %s", request.method, request.url.path, what, failure.what)
    return render(request, "not_saved.html", status_code=507 if failure.full else 503, heading=heading, what=what,
                  why=failure.what, todo=failure.todo, back=back)


STORE_FAILURES = {NotSaved: store_failed, sqlite3.Error: store_failed}  # the apps' exception handlers


class StoreFailures:
    """ASGI middleware (outside the session and login middleware, whose writes the routes' handlers do not
    see: a login, a new session): a store failure there is a short plain page saying so, never a 500 with a
    traceback or a dropped connection. Routes' failures get `store_failed`'s page instead."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except sqlite3.Error as e:
            if started:
                raise
            from starlette.responses import PlainTextResponse

            from trecbench.store.schema import store_failure

            failure = store_failure(e)
            logging.getLogger("trecbench.web").error("%s %s: not served: %s", scope.get("method"), scope.get("path"),
                                                     failure.what)
            todo = f" Ask the person who runs trecbench serve to {failure.todo}, then try again." if failure.todo else ""
            text = f"Nothing was saved (you may not be logged in): {failure.what}.{todo}\n"
            await PlainTextResponse(text, status_code=507 if failure.full else 503)(scope, receive, send)


def href(path: str, **params: str) -> str:
    return path + "?" + urlencode(params)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def param(request: Request, name: str) -> str:
    """A required query parameter, given once."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise HTTPException(400, f"parameter {name!r} is given {len(values)} times")
    if not values or not values[0]:
        raise HTTPException(400, f"missing parameter {name!r}")
    return values[0]


async def checked_form(request: Request) -> FormData:
    """The posted form, after the CSRF check; a field other than LIST_FIELDS sent twice is refused (400)."""
    form = await request.form()
    if not auth.csrf_ok(request.session, form.getlist("csrf")[0] if len(form.getlist("csrf")) == 1 else None):
        raise HTTPException(403, "the form is stale or was not sent by this site (CSRF check failed): reload the page")
    repeated = sorted({k for k in form if k not in LIST_FIELDS and len(form.getlist(k)) > 1})
    if repeated:
        raise HTTPException(400, f"form field {repeated[0]!r} is sent more than once")
    return form


def field(form: FormData, name: str) -> str | None:
    """A form field as text (None when missing or a file)."""
    value = form.get(name)
    return value if isinstance(value, str) else None
