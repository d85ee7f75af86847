"""The Host check's refusal (why it is ours, not Starlette's TrustedHostMiddleware: web/auth.py): a 421 that
names the host names this server answers to and how to add one, and bracketed IPv6 names compared bare."""
from __future__ import annotations

import pytest
from starlette.testclient import TestClient
from web_support import make_bench

from trecbench.web.app import create_app


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def test_a_refused_host_name_is_told_which_names_to_use_and_how_to_add_one(bench):
    c = TestClient(create_app(bench, require_token=False, host="127.0.0.1", allowed_hosts=["bench.example.org"]),
                   base_url="http://127.0.0.1")
    response = c.get("/", headers={"host": "evil.example:8000"})
    assert response.status_code == 421
    assert response.text == ("421 Misdirected Request: this server does not answer to the name 'evil.example:8000'; "
                             "open it as 127.0.0.1 or ::1 or bench.example.org or localhost "
                             "(`trecbench serve --allowed-host NAME` adds a name)")


def test_an_ipv6_server_answers_to_its_address_in_brackets_with_or_without_a_port(bench):
    c = TestClient(create_app(bench, require_token=False, host="::1"), base_url="http://127.0.0.1")
    for host in ["[::1]", "[::1]:8000", "localhost:8000"]:
        assert c.get("/", headers={"host": host}).status_code == 200, host
    for host in ["[::2]", "::1.evil.example", "[::1"]:
        assert c.get("/", headers={"host": host}).status_code == 421, host
