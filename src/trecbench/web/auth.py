"""Who is judging: token logins, the signed session, CSRF tokens, and the security headers of every response.

Bound to a loopback address the app trusts whoever reaches it (assessor `local`, or a name chosen on the
login page). Bound to any other address, every request (pages, form posts, static files) needs a session
made from an assessor's token (`trecbench assessors add`), given on the login page or once as `?token=`.
"""
from __future__ import annotations

import ipaddress
import logging
import re
import secrets
from typing import Any, MutableMapping
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse
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
    with ws.transaction() as c:
        c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (SECRET_KEY, secrets.token_hex(32)))
        return c.execute("SELECT value FROM meta WHERE key = ?", (SECRET_KEY,)).fetchone()[0]


def log_in(session: MutableMapping[str, Any], assessor: str, *, via: str) -> None:
    """Start a session for `assessor`; `via` is "token" or "local" (no token, loopback only)."""
    session.clear()
    session.update(assessor=assessor, via=via, csrf=secrets.token_urlsafe(24))


def assessor(session: MutableMapping[str, Any], require_token: bool) -> str | None:
    """The session's assessor, or None; a session made without a token does not count when tokens are required."""
    name = session.get("assessor")
    if not isinstance(name, str) or (require_token and session.get("via") != "token"):
        return None
    return name


def csrf_ok(session: MutableMapping[str, Any], sent: object) -> bool:
    expected = session.get("csrf")
    if not isinstance(expected, str) or not isinstance(sent, str):
        return False
    return secrets.compare_digest(expected.encode(), sent.encode())  # bytes: str must be ASCII there


def valid_name(name: str) -> bool:
    return 0 < len(name) <= 64 and not any(c.isspace() for c in name)


class Guard:
    """ASGI middleware (inside SessionMiddleware): logs in by `?token=`, turns away requests without an
    assessor, and adds the security headers (CSP with a per-request nonce) to every response."""

    def __init__(self, app: ASGIApp, *, ws: Workspace, require_token: bool):
        self.app = app
        self.ws = ws
        self.require_token = require_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce
        send = _with_security_headers(send, nonce, static=scope["path"].startswith("/static/"))
        request = Request(scope, receive)
        session = scope["session"]
        session.setdefault("csrf", secrets.token_urlsafe(24))  # the login form needs one too
        response = None
        token = request.query_params.get("token")
        if token is not None:
            name = await run_in_threadpool(self.ws.assessor_for_token, token)
            if name is None:
                response = RedirectResponse("/login?" + urlencode({"failed": "1"}), status_code=303)
            else:
                log_in(session, name, via="token")
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                response = RedirectResponse(scope["path"] + ("?" + urlencode(rest) if rest else ""), status_code=303)
        elif assessor(session, self.require_token) is None:
            if not self.require_token:
                log_in(session, LOCAL, via="local")
            elif scope["path"] not in OPEN_PATHS:
                response = _turn_away(request)
        if response is not None:
            await response(scope, receive, send)
        else:
            await self.app(scope, receive, send)


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
            headers["Referrer-Policy"] = "no-referrer"  # a ?token= never leaks to another site
            if not static:
                headers["Cache-Control"] = "no-store"  # back and reload always show the saved grades
        await send(message)

    return wrapped
