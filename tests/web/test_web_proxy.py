"""`trecbench serve` trusts `X-Forwarded-For` only from a proxy named with `--proxy`: otherwise a client
could name a new address with each request and never meet the wrong-token throttle."""
from __future__ import annotations

from paths import ROOT

import http.client
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator

import pytest
from web_support import make_bench

LIMIT = 5  # wrong tokens an address may send within a minute (auth.Throttle's default)


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(port: int, path: str, headers: dict[str, str] | None = None) -> int:
    """The status of one GET (redirects not followed)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        return conn.getresponse().status
    finally:
        conn.close()


@contextmanager
def serving(bench, *options: str) -> Iterator[int]:
    """`trecbench serve` on a free loopback port (tokens required), until the block ends; yields the port."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("FORWARDED_ALLOW_IPS", None)
    proc = subprocess.Popen([sys.executable, "-m", "trecbench.cli", "serve", "-w", str(bench), "--port", str(port),
                             "--require-token", *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _status(port, "/login")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(15)


def wrong_token(port: int, forwarded_for: str | None = None) -> int:
    return _status(port, "/?token=guess", {"X-Forwarded-For": forwarded_for} if forwarded_for else {})


def test_without_a_proxy_x_forwarded_for_does_not_give_a_client_a_fresh_address(bench):
    with serving(bench) as port:
        for i in range(LIMIT):  # a new address claimed with each guess
            assert wrong_token(port, f"10.0.0.{i + 1}") == 303
        assert wrong_token(port) == 429
        assert wrong_token(port, "10.0.0.9") == 429


def test_behind_a_named_proxy_each_forwarded_client_is_throttled_on_its_own(bench):
    with serving(bench, "--proxy", "127.0.0.1") as port:
        for _ in range(LIMIT):
            assert wrong_token(port, "10.0.0.8") == 303
        assert wrong_token(port, "10.0.0.8") == 429
        assert wrong_token(port, "10.0.0.9") == 303  # another client behind the proxy


def test_a_proxy_that_is_not_an_address_is_refused(bench, cli_run):
    result = cli_run("serve", "-w", bench, "--proxy", "proxy.example")
    assert result.exit_code == 2 and "not an IP address or network" in result.output
