"""Who is judging: token logins, the signed session, CSRF tokens, and the security headers of every response.

Bound to a loopback address the app trusts whoever reaches it (assessor `local`, or a name chosen on the
login page). Bound to any other address, every request (pages, form posts, static files) needs a session
made from an assessor's token (`trecbench assessors add`), given on the login page or once as `?token=`.
A `?token=` link another site sent the browser to asks before it logs in (`token_login_at_once`), so that
no site can switch an assessor to its own token and collect their grades under its name.

Why these are written here and not taken from a library (reviewed for issue 23, starlette 1.10):
- Host check (`Gate`): Starlette's TrustedHostMiddleware matches the same names (given `[::1]` bracketed)
  but answers every refusal `400 Invalid host header`, fixed in its `__call__`; the tests pin 421 with the
  names to use and the `--allowed-host` hint (test_web_security.py, test_web_host_check.py), and the Gate
  checks Origin and Sec-Fetch-Site in the same pass, which TrustedHostMiddleware does not.
- CSRF (`csrf_ok`): the token lives in the signed session and is renewed at every login (`log_in`), so a
  token seen before a login or in an ended session is worthless. starlette-csrf (3.0, 2023) reads it from
  an `x-csrftoken` header only, which plain HTML forms cannot send without a script; asgi-csrf (0.11,
  2024) takes a form field but ties it to a cookie of its own (double submit), which outlives logins and
  sessions ended on the server.
- Login throttle (`Throttle`): only wrong tokens count, by client address, shared by `?token=` on any
  path and the login form. slowapi (built on limits) counts every call of a decorated route, where a
  `?token=` is read in middleware on any path; limits' moving window could hold the counts, but its memory
  storage reads `time.time()` itself in whole-second windows (its own tests freeze time with hiro), so a
  test could not step the clock, and it brings three distributions for twenty lines.
"""
from __future__ import annotations

import ipaddress
import logging
import math
import re
import secrets
import threading
import time
from typing import Any, Callable, Iterable, MutableMapping
from urllib.parse import urlencode, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trecbench.store.workspace import Workspace

SECRET_KEY = "web_session_secret"  # row of the workspace's `meta` table
LOCAL = "local"
OPEN_PATHS = ("/login",)  # reachable before logging in (the login page carries its own styles)


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1): only this machine can connect."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def hide_tokens(record: logging.LogRecord) -> bool:
    """A logging filter: `?token=...` in a logged URL becomes `?token=***`, so logs hold no credentials."""
    if isinstance(record.args, tuple):
        record.args = tuple(re.sub(r"(?<=token=)[^&\s]+", "***", a) if isinstance(a, str) else a for a in record.args)
    return True


def session_secret(ws: Workspace) -> str:
    """The key that signs session cookies: made once per workspace and kept in its `meta` table."""
    return ws.meta_or_set(SECRET_KEY, secrets.token_hex(32))


def log_in(ws: Workspace, session: MutableMapping[str, Any], assessor: str, *, via: str) -> None:
    """Start a session for `assessor` (recorded in the workspace, so that it can be ended there); `via` is
    "token" or "local" (no token, loopback only)."""
    sid = ws.open_session(assessor, via)
    session.clear()
    session.update(assessor=assessor, via=via, sid=sid, csrf=secrets.token_urlsafe(24))


def log_out(ws: Workspace, session: MutableMapping[str, Any]) -> None:
    """End the session on the server too: a copy of the cookie kept from before no longer logs in."""
    sid = session.get("sid")
    if isinstance(sid, str):
        ws.end_session(sid)
    session.clear()


def assessor(session: MutableMapping[str, Any], require_token: bool) -> str | None:
    """The session's assessor, or None; a session made without a token does not count when tokens are required.
    (The Guard has checked, for this request, that the session was not ended.)"""
    name = session.get("assessor")
    if not isinstance(name, str) or (require_token and session.get("via") != "token"):
        return None
    return name


def token_login_at_once(headers: Headers, session: MutableMapping[str, Any]) -> bool:
    """Whether a `?token=` link logs in without asking: when the browser says the person asked for it
    themselves (`Sec-Fetch-Site: none`: typed, pasted, a bookmark, a link from a mail program) or from a
    page of this site (`same-origin`), or, when it says nothing (a script, or a browser too old to send
    Fetch Metadata), while the session has nobody logged in. A link another site sent the browser to
    (`cross-site`, `same-site`) or an unmarked one into a session that has an assessor is confirmed first:
    a login CSRF would otherwise switch the assessor to the other site's token."""
    site = headers.get("sec-fetch-site")
    if site is None:
        return "assessor" not in session
    return site in ("none", "same-origin")


def safe_path(target: str) -> str:
    """Only a path on this site (never `//host`, a scheme or a backslash), so no redirect leaves the site."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


class Throttle:
    """Wrong tokens per client address: after `limit` failures within `window` seconds, token logins from that
    address are refused (429) until the oldest of them is `window` seconds old."""

    def __init__(self, limit: int = 5, window: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.limit, self.window, self.clock = limit, window, clock
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds until this client may try a token again (0: now)."""
        with self._lock:
            now = self.clock()
            recent = [t for t in self._failures.get(client, []) if now - t < self.window]
            self._failures[client] = recent
            return recent[0] + self.window - now if len(recent) >= self.limit else 0.0

    def failed(self, client: str) -> None:
        with self._lock:
            self._failures.setdefault(client, []).append(self.clock())


def too_many(wait: float) -> PlainTextResponse:
    return PlainTextResponse(f"429 Too Many Requests: too many wrong tokens from this address; try again in "
                             f"{math.ceil(wait)} s", status_code=429, headers={"Retry-After": str(math.ceil(wait))})


def client_of(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


def csrf_ok(session: MutableMapping[str, Any], sent: object) -> bool:
    expected = session.get("csrf")
    if not isinstance(expected, str) or not isinstance(sent, str):
        return False
    return secrets.compare_digest(expected.encode(), sent.encode())  # bytes: str must be ASCII there


def valid_name(name: str) -> bool:
    return 0 < len(name) <= 64 and not any(c.isspace() for c in name)


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The names a Host header may give for a server bound to `host`: that address (with `localhost`,
    127.0.0.1 and ::1 on loopback) and the `extra` names (a reverse proxy's); None (any) for a server bound
    to all addresses without extra names."""
    names = {h.lower().strip("[]") for h in extra if h}
    if host in ("", "0.0.0.0", "::", "[::]"):
        return frozenset(names) if names else None
    names.add(host.lower().strip("[]"))
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "::1"}
    return frozenset(names)


def _host_name(header: str) -> str:
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Gate:
    """ASGI middleware outside the session: refuses, before any session is read or made, a Host header
    naming another site (421: DNS rebinding) and requests another site made the browser send (403): a
    POST whose Origin or Sec-Fetch-Site is not this site, or an embedded cross-site GET (an image, a
    script or a fetch; a link followed from another site, a top-level navigation, is let through)."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None, extra: frozenset[str] = frozenset()):
        self.app = app
        self.hosts = hosts
        self.extra = extra  # names an Origin may give besides the Host header (a reverse proxy's)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        response = None
        if self.hosts is not None and _host_name(host) not in self.hosts:
            response = PlainTextResponse(
                f"421 Misdirected Request: this server does not answer to the name {host!r}; open it as "
                f"{' or '.join(sorted(self.hosts))} (`trecbench serve --allowed-host NAME` adds a name)", status_code=421)
        elif not self._same_site(scope["method"], headers, host):
            response = PlainTextResponse("403 Forbidden: a request made by another site is refused", status_code=403)
        if response is not None:
            await response(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _same_site(self, method: str, headers: Headers, host: str) -> bool:
        site = headers.get("sec-fetch-site")
        if method in ("GET", "HEAD"):
            return site not in ("cross-site", "same-site") or headers.get("sec-fetch-dest") in (None, "document")
        if site not in (None, "same-origin"):
            return False
        origin = headers.get("origin")
        if origin is None:  # not sent by a browser (then the CSRF token is what counts)
            return True
        netloc = urlsplit(origin).netloc.lower()
        return bool(netloc) and (netloc == host.lower() or _host_name(netloc) in self.extra)


# The page that asks "log in as NAME?" for a `?token=` link that may come from another site:
# (request, the token's assessor, the token, the path to go to after logging in) -> the page.
ConfirmPage = Callable[[Request, str, str, str], Response]


class Guard:
    """ASGI middleware (inside SessionMiddleware): ends sessions the workspace no longer has, logs in by
    `?token=` (or asks first, through `confirm`, see `token_login_at_once`), turns away requests without an
    assessor, and adds the security headers (CSP with a per-request nonce) to every response."""

    def __init__(self, app: ASGIApp, *, ws: Workspace, require_token: bool, throttle: Throttle,
                 confirm: ConfirmPage):
        self.app = app
        self.ws = ws
        self.require_token = require_token
        self.throttle = throttle
        self.confirm = confirm

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce
        send = _with_security_headers(send, nonce, static=scope["path"].startswith("/static/"))
        request = Request(scope, receive)
        session = scope["session"]
        if "assessor" in session:
            sid = session.get("sid")
            alive = await run_in_threadpool(self.ws.session, sid) if isinstance(sid, str) else None
            if alive is None or tuple(alive) != (session.get("assessor"), session.get("via")):
                session.clear()  # logged out, removed or given a new token since
        session.setdefault("csrf", secrets.token_urlsafe(24))  # the login form needs one too
        response = None
        token = request.query_params.get("token")
        if token is not None:
            response = await self._token_login(scope, request, session, token)
        elif assessor(session, self.require_token) is None and scope["path"] not in OPEN_PATHS:
            if self.require_token:
                response = _turn_away(request)
            else:
                await run_in_threadpool(log_in, self.ws, session, LOCAL, via="local")
        if response is not None:
            await response(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _token_login(self, scope: Scope, request: Request, session, token: str):
        client = client_of(scope)
        wait = self.throttle.wait(client)
        if wait > 0:
            return too_many(wait)
        name = await run_in_threadpool(self.ws.assessor_for_token, token)
        if name is None:
            self.throttle.failed(client)
            return RedirectResponse("/login?" + urlencode({"failed": "1"}), status_code=303)
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = safe_path(scope["path"]) + ("?" + urlencode(rest) if rest else "")
        if not token_login_at_once(request.headers, session):
            if session.get("via") == "token" and session.get("assessor") == name:
                return RedirectResponse(target, status_code=303)  # already logged in with this token's name
            return self.confirm(request, name, token, target)
        await run_in_threadpool(log_in, self.ws, session, name, via="token")
        return RedirectResponse(target, status_code=303)


def _turn_away(request: Request):
    """A page asked for in the browser goes to the login page; anything else is refused with 401."""
    if request.method in ("GET", "HEAD") and not request.url.path.startswith("/static/"):
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)
    return PlainTextResponse("401 Unauthorized: log in with your assessor token", status_code=401)


def _with_security_headers(send: Send, nonce: str, *, static: bool) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            headers["Content-Security-Policy"] = (
                "default-src 'none'; script-src 'self'; "
                f"style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; "
                "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
            headers["X-Content-Type-Options"] = "nosniff"
            headers["X-Frame-Options"] = "DENY"
            # a ?token= never leaks to another site; same-origin (not no-referrer) so that a form post
            # carries this site's Origin, which the Gate checks
            headers["Referrer-Policy"] = "same-origin"
            if not static:
                headers["Cache-Control"] = "no-store"  # back and reload always show the saved grades
        await send(message)

    return wrapped
