"""Nugget editing in the assessor app: a topic's nuggets, where every change is a new version by the assessor.

The pages are rendered on the server like the judging pages. Each form posts to its own small route,
which checks the CSRF token and, in the same store transaction as the change itself (compare-and-set),
refuses a form made from a version of the nugget that is no longer the current one or that does not say
its version (another assessor changed it meanwhile: an unlink by position or an undo would otherwise hit
the wrong thing), calls `NuggetStore` with the logged-in assessor as author, and redirects back to the
topic page at the nugget (post/redirect/get). Topic and nugget ids are path segments, percent-encoded, so
ids containing "/" reach their pages too. What the store refuses (empty text, an unknown nugget) comes
back as a message on that page, never as a traceback.

Marking evidence without a pool (`/nuggets/QID/NID/mark`): the assessor searches the whole corpus (BM25,
`trecbench.nuggets.search`: no judgment or pool needed), opens a passage, selects the supporting text with
the mouse (or types its characters) and adds it, as the selected span or the whole passage, as a new
alternative or as a joint source of an alternative the nugget has (`NuggetStore.link`).
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable
from urllib.parse import quote, unquote, urlencode

from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trecbench.errors import InputError
from trecbench.nuggets.model import IMPORTANCE
from trecbench.web import queries
from trecbench.web.common import (
    Bench,
    bench_of,
    checked_form,
    field,
    macro,
    me,
    redirect,
    render,
)
from trecbench.web.highlight import highlight, query_terms

SNIPPET = 140  # characters of a document shown beside its checkbox; the full text is one click away


def routes() -> list[Route]:
    """`/nuggets`, then `/nuggets/QID` (GET), `/nuggets/QID/add|merge` (POST), `/nuggets/QID/NID/history`
    and `/nuggets/QID/NID/mark` (GET) and `/nuggets/QID/NID/ACTION` (POST), each id one percent-encoded
    path segment."""
    return [
        Route("/nuggets", topics_page, methods=["GET"]),
        Route("/nuggets/{rest:path}", _get, methods=["GET"]),
        Route("/nuggets/{rest:path}", _post, methods=["POST"]),
    ]


def _segments(request: Request) -> list[str]:
    """The ids after /nuggets/, decoded one segment at a time (the router decodes %2F into a separator)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    parts = raw.decode("ascii", "replace").split("/")[2:]
    if not parts or any(not p for p in parts):
        raise HTTPException(404)
    return [unquote(p) for p in parts]


async def _get(request: Request) -> Response:
    parts = _segments(request)
    if len(parts) == 1:
        return await run_in_threadpool(topic_page, request, parts[0])
    if len(parts) == 3 and parts[2] == "history":
        return await run_in_threadpool(history_page, request, parts[0], parts[1])
    if len(parts) == 3 and parts[2] == "mark":
        return await run_in_threadpool(mark_page, request, parts[0], parts[1])
    raise HTTPException(404)


async def _post(request: Request) -> Response:
    parts = _segments(request)
    if len(parts) == 2 and parts[1] in ("add", "merge", "approve-all"):
        post = {"add": add_post, "merge": merge_post, "approve-all": approve_all_post}[parts[1]]
        return await post(request, parts[0])
    if len(parts) == 3:
        return await nugget_post(request, *parts)
    raise HTTPException(404)


# ---- the store, URLs, messages ----

def store(bench: Bench):
    """The bench's NuggetStore (it works through the workspace's per-thread connections)."""
    return bench.nugget_store()


def topic_url(qid: str, nid: str | None = None) -> str:
    return f"/nuggets/{quote(qid, safe='')}" + (f"#n-{quote(nid, safe='')}" if nid else "")


def link_url(qid: str, nid: str) -> str:
    """The topic page with the nugget's form for linking documents open (one nugget's at a time: a topic
    with hundreds of relevant documents and dozens of nuggets would list them thousands of times)."""
    return f"{topic_url(qid)}?{urlencode({'link': nid})}#n-{quote(nid, safe='')}"


def nugget_url(qid: str, nid: str, what: str) -> str:
    return f"/nuggets/{quote(qid, safe='')}/{quote(nid, safe='')}/{what}"


def mark_url(qid: str, nid: str, query: str | None = None, docid: str | None = None) -> str:
    """The nugget's marking page, with the search `query` run and the passage `docid` open."""
    params = {k: v for k, v in (("q", query), ("docid", docid)) if v}
    return nugget_url(qid, nid, "mark") + (f"?{urlencode(params)}" if params else "")


class Refused(Exception):
    """An edit that was not made, with the reason the assessor sees."""


@dataclass
class Outcome:
    message: str
    anchor: str | None = None  # the nugget to show
    error: bool = False
    href: str | None = None  # a link after the message (a deleted nugget's history)


def _flash(request: Request, outcome: Outcome) -> None:
    # The session is a signed cookie: keep the message short.
    request.session["flash"] = {"text": outcome.message[:400], "error": outcome.error, "href": outcome.href}


def _why(e: BaseException) -> str:
    if type(e) is KeyError:  # str(KeyError('x')) is "'x'"
        return f"no such nugget: {e.args[0]}" if e.args else "no such nugget"
    return str(e) or type(e).__name__


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---- pages ----

@dataclass(frozen=True)
class TopicRow:
    qid: str
    text: str
    total: int
    vital: int
    approved: int


def topics_page(request: Request) -> Response:
    bench = bench_of(request)
    me(request)
    counts = {qid: (total, vital, approved) for qid, total, vital, approved in bench.ws.nugget_counts_by_topic()}
    texts = bench.ws.topic_texts()
    rows = []
    for qid in sorted(set(texts) | set(counts), key=queries.topic_order):
        text = texts[qid] if qid in texts else store(bench).query(qid) or ""  # a topic only a nuggets file had
        rows.append(TopicRow(qid, text, *counts.get(qid, (0, 0, 0))))
    return render(request, "nuggets_topics.html", rows=rows, topic_url=topic_url)


@dataclass(frozen=True)
class DocView:
    docid: str
    grade: int
    title: str | None
    text: Markup | None  # escaped, query words marked
    snippet: str
    missing: str | None
    html: Markup = Markup("")  # as the page's list of relevant documents shows it


def topic_page(request: Request, qid: str) -> Response:
    bench = bench_of(request)
    me(request)
    nuggets = store(bench).topic(qid)
    if not nuggets and not bench.ws.known_topic(qid):
        raise HTTPException(404, f"no topic {qid!r}")
    topic = _topic(bench, qid)
    terms = query_terms(topic[0]) if topic else []
    docs = _documents(bench, qid, terms)
    return render(request, "nuggets_topic.html", qid=qid, topic=topic, nuggets=nuggets, docs=docs,
                  linking=request.query_params.get("link"), link_url=link_url, relevant={d.docid for d in docs},
                  importance=IMPORTANCE, flash=request.session.pop("flash", None), nugget_url=nugget_url,
                  topic_url=topic_url, when=when)


def _documents(bench: Bench, qid: str, terms: list[str]) -> list[DocView]:
    """The topic's judged-relevant documents as the page shows them (read from the corpus, words marked);
    each is kept until its grade, the corpus file or the topic's words change, so a page after a new
    judgment reads one document, not all of them again."""
    stamp, words = bench.corpus_version(), tuple(terms)

    def view(docid: str, grade: int) -> DocView:
        doc, missing = bench.document(docid)
        text = doc.text if doc else ""
        shown = DocView(docid, grade, doc.title if doc else None, highlight(text, terms) if doc else None,
                        _short(" ".join(text.split()), SNIPPET), missing)
        return dataclasses.replace(shown, html=macro("nuggets_doc.html", "doc")(shown))

    return [bench.memo(("document", qid, docid), (grade, stamp, words), functools.partial(view, docid, grade))
            for docid, grade in bench.relevant(qid)]


def _topic(bench: Bench, qid: str) -> tuple[str, str | None] | None:
    """(text, narrative) of the workspace's topic, else the query a nuggets file gave, else None."""
    found = bench.ws.topic_text(qid)
    if found is None:
        query = store(bench).query(qid)
        found = (query, None) if query else None
    return found


@dataclass(frozen=True)
class Change:
    field: str
    old: Any
    new: Any
    diff: Markup | None = None  # for text: the words taken out and put in


@dataclass(frozen=True)
class VersionView:
    nugget_id: str
    version: int
    action: str
    author: str
    created_at: str
    detail: dict
    changes: list[Change]


def history_page(request: Request, qid: str, nid: str) -> Response:
    bench = bench_of(request)
    me(request)
    nuggets = store(bench)
    try:
        versions = nuggets.history(nid)
    except KeyError:
        versions = []
    try:
        current = nuggets.get(nid)
    except KeyError:
        current = None  # deleted: its history stays, and undo brings it back
    if not versions or _qid_of(current, versions) != qid:
        raise HTTPException(404, f"topic {qid!r} has no nugget {nid!r}")
    latest = versions[-1]
    return render(request, "nuggets_history.html", qid=qid, nid=nid, current=current,
                      text=current.text if current else latest.snapshot.get("text", ""),
                      versions=lineage(nuggets, nid, versions), latest=latest, topic_url=topic_url,
                      nugget_url=nugget_url, when=when, topic=_topic(bench, qid), describe=describe)


def lineage(nuggets, nid: str, versions: list) -> list[VersionView]:
    """The nugget's versions and those of the nuggets it was merged or split from (and theirs), newest
    first: a merged nugget's history goes on to show the edits made before the merge."""
    views: list[tuple[tuple, VersionView]] = []
    seen: set[str] = set()
    todo: list[tuple[str, list, int]] = [(nid, versions, 0)]
    while todo:
        this, history, depth = todo.pop()
        if this in seen:
            continue
        seen.add(this)
        before = None
        for v in history:
            views.append(((v.created_at, -depth, v.version),
                          VersionView(this, v.version, v.action, v.author, v.created_at, v.detail,
                                      changes(before, v.snapshot, v.action))))
            before = v.snapshot
            if v.action in ("merge", "split-from"):  # only what made this nugget; not what it was merged into
                sources = v.detail.get("from", [])
                for source in [sources] if isinstance(sources, str) else sources:
                    try:
                        todo.append((str(source), nuggets.history(str(source)), depth + 1))
                    except KeyError:
                        pass
    views.sort(key=lambda item: item[0], reverse=True)
    return [view for _, view in views]


def _qid_of(current, versions) -> str | None:
    if current is not None:
        return current.qid
    for v in reversed(versions):
        if v.snapshot.get("qid"):
            return str(v.snapshot["qid"])
    return None


# ---- what a version changed ----

SHOWN = ("text", "importance", "status", "support", "origin", "deleted", "position")
HIDDEN = {"id", "qid", "version", "updated_by", "updated_at", "created_at", "author"}
# A nugget's place also shifts when a neighbour is added or deleted, without a version of its own: shown
# only where the action itself moved it.
MOVES = {"reorder", "undo", "import"}


def changes(before: dict | None, after: dict, action: str = "") -> list[Change]:
    """The fields a version changed against the one before it (all shown fields for the first version):
    text as a word diff, support as "[A] or [B + C]", anything else the store keeps as old -> new."""
    first = before is None
    before = before or {}
    out = []
    keys = [k for k in SHOWN if k in after or k in before]
    keys += sorted(k for k in set(after) | set(before) if k not in SHOWN and k not in HIDDEN)
    for key in keys:
        old, new = before.get(key), after.get(key)
        if key == "position" and (first or action not in MOVES):
            continue
        if first and not new and key not in ("support", "text"):
            continue  # a new nugget's empty extras, or that it is not deleted: not worth a line
        if key == "support":
            old, new = (support_text(old) if key in before else None), support_text(new)
        elif key == "deleted":
            old, new = ("yes" if old else "no"), ("yes" if new else "no")
        elif key == "position":
            key = "place"  # 1-based, as the topic page counts
            old, new = (old + 1 if isinstance(old, int) else old), (new + 1 if isinstance(new, int) else new)
        if old == new:
            continue
        if key == "text" and isinstance(old, str) and isinstance(new, str):
            out.append(Change(key, old, new, word_diff(old, new)))
        else:
            out.append(Change(key, _plain(old), _plain(new)))
    return out


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(str(_plain(v)) for v in value)
    return str(value)


def support_text(support: Any) -> str:
    """Support alternatives as the page shows them: "[A] or [B + C]" (empty: "none")."""
    groups = []
    for group in support or ():
        docids = [_docid(link) for link in (group if isinstance(group, (list, tuple)) else [group])]
        groups.append("[" + " + ".join(docids) + "]")
    return " or ".join(groups) if groups else "none"


def _docid(link: Any) -> str:
    """A link as the pages show it: its docid, a span link's characters after it (`d1[10:42]`)."""
    if isinstance(link, dict):
        start, end = link.get("start"), link.get("end")
        return str(link.get("docid", link)) + (f"[{start}:{end}]" if start is not None else "")
    start, end = getattr(link, "start", None), getattr(link, "end", None)
    return str(getattr(link, "docid", link)) + (f"[{start}:{end}]" if start is not None else "")


def word_diff(old: str, new: str) -> Markup:
    """`new` with the words taken out of `old` in <del> and the words put in as <ins>, all escaped."""
    a, b = re.findall(r"\s+|\S+", old), re.findall(r"\s+|\S+", new)
    pieces: list[Markup] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(escape("".join(a[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(Markup("<del>{}</del>").format("".join(a[i1:i2])))
        if j2 > j1:
            pieces.append(Markup("<ins>{}</ins>").format("".join(b[j1:j2])))
    return Markup("").join(pieces)


def describe(detail: dict, qid: str) -> Markup:
    """What a version's `detail` adds, as a line: the nuggets it merged or split (linked), the version an
    undo went back to, the documents a link or unlink named."""
    def nuggets_of(value: Any) -> Markup:
        ids = [value] if isinstance(value, str) else list(value or ())
        return Markup(", ").join(Markup('<a href="{}">{}</a>').format(nugget_url(qid, str(i), "history"), i)
                                 for i in ids)

    parts: list[Markup] = []
    for key, value in detail.items():
        if key in ("from", "into"):
            parts.append(Markup("{} {}").format(key, nuggets_of(value)))
        elif key == "restores":
            parts.append(escape(f"back to version {value}" if value else "back to before it existed"))
        elif key == "undid":
            parts.append(escape(f"(undid {value})"))
        elif key == "docids":
            spans = detail.get("spans") or [None] * len(value)
            parts.append(escape("[" + " + ".join(str(d) + (f"[{m[0]}:{m[1]}]" if m else "")
                                                 for d, m in zip(value, spans)) + "]"))
        elif key == "spans":
            continue  # shown with the docids
        elif key != "from_position":  # the place change is shown with the other changes
            parts.append(escape(f"{key}: {_plain(value)}"))
    return Markup(" ").join(parts)


def when(stamp: str) -> str:
    """An ISO time as `2025-06-01 14:03:07 UTC` (the store writes UTC); anything else as it is."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return str(stamp)
    offset = moment.utcoffset()
    zone = "" if offset is None else " UTC" if not offset else moment.strftime(" %z")
    return moment.strftime("%Y-%m-%d %H:%M:%S") + zone


# ---- the posts ----

async def add_post(request: Request, qid: str) -> Response:
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)

    def run() -> Outcome:
        if not store(bench).topic(qid) and not bench.ws.known_topic(qid):
            raise HTTPException(404, f"no topic {qid!r}")
        text, importance = _text(form), _importance(form)
        made = store(bench).add(qid, text, importance, author=who)
        return Outcome(f"Added nugget {made.id}.", made.id)

    return await _answer(request, qid, run)


async def merge_post(request: Request, qid: str) -> Response:
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)

    def run() -> Outcome:
        ids = list(dict.fromkeys(str(v) for v in form.getlist("nid")))
        if len(ids) < 2:
            raise Refused("Tick two or more nuggets to merge them.")
        nuggets = store(bench)
        with bench.ws.transaction():  # the versions are checked in the transaction that merges
            for nid in ids:
                current = nuggets.get(nid)
                if current.qid != qid:
                    raise KeyError(nid)
                _fresh(form, current.version, current.updated_by, current.updated_at, nid, f"version-{nid}")
            text = " ".join((field(form, "text") or "").split()) or None
            made = nuggets.merge(ids, author=who, text=text)
        return Outcome(f"Merged {', '.join(ids)} into {made.id}.", made.id)

    return await _answer(request, qid, run)


async def approve_all_post(request: Request, qid: str) -> Response:
    """Approve every draft nugget of the topic at once (each approval a version in its history)."""
    await checked_form(request)  # refused without the session's CSRF token
    bench, who = bench_of(request), me(request)

    def run() -> Outcome:
        approved = store(bench).approve_all(qid, author=who)
        if not approved:
            raise Refused("Every nugget of this topic is approved already.")
        return Outcome(f"Approved {len(approved)} nugget(s): {', '.join(n.id for n in approved)}.", None)

    return await _answer(request, qid, run)


async def nugget_post(request: Request, qid: str, nid: str, action: str) -> Response:
    form = await checked_form(request)
    bench, who = bench_of(request), me(request)
    handler = ACTIONS.get(action)
    if handler is None:
        raise HTTPException(404, f"no action {action!r}")

    def run() -> Outcome:
        nuggets = store(bench)
        # compare-and-set: the version the form was made from is checked in the transaction that writes,
        # so of several saves made from one version exactly one is made
        with bench.ws.transaction():
            if action == "undo":  # a deleted nugget has no current state, only its history
                versions = nuggets.history(nid)
                try:
                    current = nuggets.get(nid)
                except KeyError:
                    current = None
                if not versions or _qid_of(current, versions) != qid:
                    raise KeyError(nid)
                _fresh(form, versions[-1].version, versions[-1].author, versions[-1].created_at, nid)
            else:
                current = nuggets.get(nid)
                if current.qid != qid:
                    raise KeyError(nid)
                _fresh(form, current.version, current.updated_by, current.updated_at, nid)
            return handler(bench, nuggets, current, nid, form, who)

    back = mark_url(qid, nid, field(form, "q"), field(form, "docid")) if action == "mark" else None
    return await _answer(request, qid, run, anchor=nid, back=back)


async def _answer(request: Request, qid: str, run: Callable[[], Outcome], anchor: str | None = None,
                  back: str | None = None) -> Response:
    """Run the edit in the thread pool; its outcome (or why it was refused) is the next page's message, on
    the topic page at the nugget, or on the page `back` (the marking page a mark came from)."""
    try:
        outcome = await run_in_threadpool(run)
    except (Refused, LookupError, ValueError, InputError) as e:  # LookupError: KeyError, IndexError
        outcome = Outcome(_why(e), anchor, error=True)
    _flash(request, outcome)
    return redirect(back or topic_url(qid, outcome.anchor))


def _fresh(form, version: int, by: str, at: str, nid: str, name: str = "version") -> None:
    """Refuse the change unless the form says it was made from the nugget's current version."""
    sent = field(form, name)
    if sent is None:
        raise Refused(f"The form does not say which version of nugget {nid} it was made from; nothing was done. "
                      "Reload the page and redo your change.")
    if sent != str(version):
        raise Refused(f"Nugget {nid} was changed by {by} at {when(at)} after you opened the page (it is now "
                      f"version {version}); nothing was done. Look at it again and redo your change.")


def _text(form, field: str = "text") -> str:
    text = " ".join(str(form.get(field) or "").split())  # as the store keeps it: one line, single spaces
    if not text:
        raise Refused("A nugget needs some text.")
    return text


def _importance(form) -> str:
    importance = str(form.get("importance") or "okay")
    if importance not in IMPORTANCE:
        raise Refused(f"Importance is one of {', '.join(IMPORTANCE)}, not {importance!r}.")
    return importance


# Each action: (bench, store, current nugget or None, nugget id, form, assessor) -> Outcome.

def _edit(bench, nuggets, current, nid, form, who) -> Outcome:
    text, importance = _text(form), _importance(form)
    changed = {k: v for k, v in (("text", text), ("importance", importance)) if v != getattr(current, k)}
    if not changed:
        return Outcome(f"Nugget {nid} is unchanged.", nid)
    nuggets.edit(nid, author=who, **changed)
    return Outcome(f"Saved nugget {nid}.", nid)


def _approve(bench, nuggets, current, nid, form, who) -> Outcome:
    nuggets.approve(nid, author=who)
    return Outcome(f"Approved nugget {nid}.", nid)


def _delete(bench, nuggets, current, nid, form, who) -> Outcome:
    nuggets.delete(nid, author=who)
    return Outcome(f"Deleted nugget {nid} ({_short(current.text)}). Its history, with undo, stays:",
                   None, href=nugget_url(current.qid, nid, "history"))


def _split(bench, nuggets, current, nid, form, who) -> Outcome:
    texts = [" ".join(line.split()) for line in str(form.get("texts") or "").splitlines() if line.strip()]
    if len(texts) < 2:
        raise Refused("Write two or more lines to split a nugget: one line per new nugget.")
    made = nuggets.split(nid, texts, author=who)
    return Outcome(f"Split nugget {nid} into {', '.join(n.id for n in made)}.", made[0].id if made else None)


def _move(bench, nuggets, current, nid, form, who) -> Outcome:
    step = {"up": -1, "down": 1}.get(str(form.get("direction")))
    if step is None:
        raise Refused("Move a nugget up or down.")
    order = [n.id for n in nuggets.topic(current.qid)]
    i = order.index(nid)
    j = i + step
    if not 0 <= j < len(order):
        return Outcome(f"Nugget {nid} is already {'first' if step < 0 else 'last'}.", nid)
    order[i], order[j] = order[j], order[i]
    nuggets.reorder(current.qid, order, author=who)
    return Outcome(f"Moved nugget {nid} {'up' if step < 0 else 'down'}.", nid)


def _link(bench, nuggets, current, nid, form, who) -> Outcome:
    docids = list(dict.fromkeys(str(d) for d in form.getlist("docid")))
    if not docids:
        raise Refused("Tick one document (it supports the nugget alone) or several (they support it together).")
    relevant = {docid for docid, _ in bench.relevant(current.qid)}
    outside = [d for d in docids if d not in relevant]
    if outside:
        raise Refused(f"Only documents judged relevant to topic {current.qid} can support its nuggets, "
                      f"not {', '.join(outside)}.")
    nuggets.link(nid, docids, author=who)
    together = " together" if len(docids) > 1 else ""
    return Outcome(f"Linked [{' + '.join(docids)}] to nugget {nid}: they support it{together}.", nid)


def _unlink(bench, nuggets, current, nid, form, who) -> Outcome:
    try:
        alternative = int(str(form.get("alternative")))
    except ValueError:
        raise Refused("Choose the documents to unlink.") from None
    count = len(current.support)
    if not 0 <= alternative < count:
        have = f"its {count} are numbered 0 to {count - 1}" if count else "it has none"
        raise Refused(f"Nugget {nid} has no support alternative {alternative} ({have}); nothing was unlinked.")
    gone = support_text([current.support[alternative]])
    nuggets.unlink(nid, alternative, author=who)
    return Outcome(f"Unlinked {gone} from nugget {nid}.", nid)


def _undo(bench, nuggets, current, nid, form, who) -> Outcome:
    nuggets.undo(nid, author=who)
    try:
        nuggets.get(nid)
    except KeyError:  # undoing its creation (or a merge that made it) deletes it
        return Outcome(f"Undid the last change of nugget {nid}; it is deleted now, its history stays:", None,
                       href=nugget_url(_qid_of(None, nuggets.history(nid)) or "", nid, "history"))
    return Outcome(f"Undid the last change of nugget {nid}.", nid)


def _mark(bench, nuggets, current, nid, form, who) -> Outcome:
    """Add a passage of the corpus (judged or not: no pool needed), or the span of it the assessor selected,
    as a new alternative or as a joint source of alternative number `alternative`."""
    docid = (field(form, "docid") or "").strip()
    doc, missing = bench.document(docid) if docid else (None, "Open a passage first.")
    if doc is None:
        raise Refused(missing or f"The corpus has no passage {docid!r}.")
    span = _selected_span(doc.text, form)
    how = field(form, "how") or "alternative"
    if how not in ("alternative", "joint"):
        raise Refused(f"Add it as an alternative or as a joint source, not {how!r}.")
    alternative = None
    if how == "joint":
        try:
            alternative = int(field(form, "alternative") or "")
        except ValueError:
            raise Refused("Choose the alternative it is a joint source of.") from None
        if not 0 <= alternative < len(current.support):
            raise Refused(f"Nugget {nid} has no support alternative {alternative + 1}; nothing was added.")
    made = nuggets.link(nid, [docid], spans=[span], alternative=alternative, author=who)
    what = f"{docid}[{span[0]}:{span[1]}] (“{_short(doc.text[span[0]:span[1]])}”)" if span else f"{docid} (whole passage)"
    where = "a new alternative" if alternative is None else f"a joint source of alternative {alternative + 1}"
    return Outcome(f"Added {what} to nugget {nid} as {where}: now {support_text(made.support)}.", nid)


def _selected_span(text: str, form) -> tuple[int, int] | None:
    """The characters to link (None: the whole passage). The browser sends the selection's offsets and its
    text; where they disagree (a browser counts some characters differently) the selected text nearest the
    offsets wins. Blanks at either end are left out."""
    if (field(form, "scope") or "span") == "whole":
        return None
    try:
        start, end = int(field(form, "start") or ""), int(field(form, "end") or "")
    except ValueError:
        raise Refused("Select the supporting text in the passage (or type its first and last character), "
                      "or add the whole passage.") from None
    selected = field(form, "selected")
    if selected and text[start:end] != selected:
        found = [i for i in (text.rfind(selected, 0, max(0, start) + len(selected)), text.find(selected, max(0, start)))
                 if i >= 0]
        if not found:
            raise Refused("The selected text is not in the passage; select it again.")
        start = min(found, key=lambda i: abs(i - start))
        end = start + len(selected)
    if not 0 <= start < end <= len(text):
        raise Refused(f"Characters {start} to {end} are not a span of the passage ({len(text)} characters).")
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise Refused("The selection is only blanks; select the supporting text.")
    return None if (start, end) == (0, len(text)) else (start, end)


ACTIONS: dict[str, Callable[..., Outcome]] = {
    "edit": _edit, "approve": _approve, "delete": _delete, "split": _split, "move": _move, "link": _link,
    "unlink": _unlink, "undo": _undo, "mark": _mark,
}


# ---- marking evidence in the whole corpus ----

HITS = 20  # passages a search shows


@dataclass(frozen=True)
class HitView:
    docid: str
    score: float
    title: str | None
    snippet: str
    url: str


@dataclass(frozen=True)
class OpenDoc:
    docid: str
    title: str | None
    text: Markup  # escaped, query words marked; its characters are the passage's, so a selection's offsets are
    length: int


def mark_page(request: Request, qid: str, nid: str) -> Response:
    bench = bench_of(request)
    me(request)
    try:
        nugget = store(bench).get(nid)
    except KeyError:
        nugget = None
    if nugget is None or nugget.qid != qid:
        raise HTTPException(404, f"topic {qid!r} has no nugget {nid!r}")
    query = " ".join((request.query_params.get("q") or "").split())
    docid = request.query_params.get("docid") or ""
    terms = query_terms(query or nugget.text)
    hits, problem = _search(bench, qid, nid, query) if query else ([], None)
    opened, missing = None, None
    if docid:
        doc, missing = bench.document(docid)
        if doc is not None:
            opened = OpenDoc(docid, doc.title, highlight(doc.text, terms), len(doc.text))
    return render(request, "nuggets_mark.html", qid=qid, nugget=nugget, query=query, hits=hits, problem=problem,
                  opened=opened, missing=missing, docid=docid, topic=_topic(bench, qid), topic_url=topic_url,
                  nugget_url=nugget_url, support_text=support_text, flash=request.session.pop("flash", None))


def _search(bench: Bench, qid: str, nid: str, query: str) -> tuple[list[HitView], str | None]:
    """The passages BM25 finds for `query` in the whole corpus, or why it cannot search."""
    from trecbench.nuggets.search import CorpusSearch
    from trecbench.runs.baselines.base import BackendUnavailable

    search = bench.memo(("corpus-search",), (bench.corpus_version(),), lambda: CorpusSearch(bench.ws))
    try:
        found = search.search(query, HITS)
    except (InputError, BackendUnavailable) as e:
        return [], str(e)
    out = []
    for hit in found:
        doc, _ = bench.document(hit.docid)
        text = doc.text if doc is not None else ""
        out.append(HitView(hit.docid, hit.score, doc.title if doc is not None else None,
                           _short(" ".join(text.split()), 2 * SNIPPET), mark_url(qid, nid, query, hit.docid)))
    return out, None
