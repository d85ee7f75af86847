"""`serve` binds its port before it prints the URL: a port another program listens on is one line and exit 2."""
from __future__ import annotations

import socket

import pytest


@pytest.fixture
def bench(tmp_path, cli_run):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\n")
    path = tmp_path / "bench"
    assert cli_run("init", path, "--topics", topics).exit_code == 0
    return path


def test_a_port_another_program_listens_on_is_one_line_and_exit_2(bench, cli_run):
    with socket.socket() as other:  # another program's server on a loopback port
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        r = cli_run("serve", "-w", bench, "--port", port)
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [f"Error: cannot listen on http://127.0.0.1:{port}/: port {port} is taken by "
                                     "another program; choose another with --port"]
    assert r.stdout == ""  # no URL: the one that was printed belonged to the other program


def test_the_url_is_printed_once_the_port_is_ours(bench, cli_run, monkeypatch):
    served = {}

    def serve(ws, **options):  # the app would run here; the socket it is given already listens
        sock = options["sock"]
        served["port"] = sock.getsockname()[1]
        with socket.create_connection(("127.0.0.1", served["port"]), timeout=5):
            served["reached"] = True

    monkeypatch.setattr("trecbench.web.app.serve", serve)
    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    r = cli_run("serve", "-w", bench, "--port", port)
    assert r.exit_code == 0, r.output
    assert served == {"port": port, "reached": True}
    assert f"at http://127.0.0.1:{port}/ (no login needed on this machine)" in r.stderr
