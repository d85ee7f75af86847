"""`trecbench serve`: the assessor web app for judging in the browser."""
from __future__ import annotations

import sys

import click

from trecbench.cli.workspace import workspace_option


def _addresses(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Each --proxy is an IP address or network (uvicorn would take a typo for a name and trust nothing)."""
    import ipaddress

    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise click.BadParameter(f"{value!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/24)") from None
    return values


@click.command("serve")
@workspace_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any address other than loopback requires assessor tokens.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--double", is_flag=True,
              help="Offer each document to two different assessors, so that agreement can be computed.")
@click.option("--require-token", is_flag=True,
              help="Require tokens even on loopback (e.g. behind a reverse proxy that others reach).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Another name the server is reached by (a reverse proxy's); requests naming any other host "
                   "than --host (and localhost on loopback) are refused. Repeatable.")
@click.option("--proxy", "proxies", multiple=True, metavar="ADDRESS", callback=_addresses,
              help="Address (or network, e.g. 10.0.0.0/24) of the reverse proxy in front: only its connections "
                   "may name the client in X-Forwarded-For, which wrong tokens are throttled by; without --proxy "
                   "the header is ignored. Repeatable.")
@click.option("--pool", "pool_name", default=None, help="Pool to judge, by name or id (default: the newest).")
def serve(workspace: str, host: str, port: int, double: bool, require_token: bool, allowed_hosts: tuple[str, ...],
          proxies: tuple[str, ...], pool_name: str | None) -> None:
    """Judge the newest pool (or --pool) in the browser: topic list with progress, a judging page per document.

    Keys 0-3 grade a document and move on, n/p go to the next/previous one; every grade is saved at
    once as a judgment of the assessor. A document is offered to one assessor at a time (two with
    --double). On 127.0.0.1 no login is needed; bound to any other address every request needs an
    assessor's token (`trecbench assessors add NAME`), entered on the login page or given once as
    `?token=...` in the URL (a link another site sent the browser to asks before it logs in). Serve
    beyond this machine behind an HTTPS proxy (name it with --proxy): plain HTTP shows tokens and
    cookies to the network. Requests that name another host, or that another site makes the browser
    send, are refused; wrong tokens are throttled per address. See docs/web.md.

    \b
    Example:
      trecbench serve -w mybench
      trecbench assessors add alice -w mybench
      trecbench serve -w mybench --host 0.0.0.0 --port 8080 --double
      trecbench serve -w mybench --pool mtf30
      trecbench serve -w mybench --require-token --allowed-host bench.example.org --proxy 127.0.0.1
    """
    from trecbench.store import Workspace
    from trecbench.web.app import serve as run
    from trecbench.web.auth import is_loopback

    ws = Workspace(workspace)  # a bad workspace or pool is reported before anything listens
    pool = ws.pool(pool_name)
    tokens = require_token or not is_loopback(host)
    if tokens and not ws.assessors():
        click.echo(f"no assessors yet: nobody can log in; add one with `trecbench assessors add NAME -w {workspace}`",
                   err=True)
    sock = _bound(host, port)  # before the URL is printed: a taken port is one line, not another program's URL
    what = f"pool {pool.name!r}" if pool else "no pool yet"
    click.echo(f"judging {ws.settings.name} ({what}) at http://{host}:{port}/ "
               f"({'assessor tokens required' if tokens else 'no login needed on this machine'}"
               f"{', double judging' if double else ''}); Ctrl-C stops", err=True)
    with sock:
        run(ws, host=host, port=port, double=double, require_token=tokens, pool=pool_name,
            allowed_hosts=allowed_hosts, proxies=proxies, sock=sock)


def _bound(host: str, port: int):
    """The listening socket of `host`:`port`; exit 2 with one line saying why when it cannot be had."""
    import errno
    import socket

    from trecbench.web.app import listen

    try:
        return listen(host, port)
    except socket.gaierror:
        why = f"the host name {host!r} does not resolve; give --host an address of this machine"
    except OSError as e:
        why = {errno.EADDRINUSE: f"port {port} is taken by another program; choose another with --port",
               errno.EADDRNOTAVAIL: f"{host} is not an address of this machine; choose another with --host",
               errno.EACCES: f"not allowed to listen on port {port} (ports below 1024 need privileges); "
                             "choose another with --port"}.get(e.errno or 0, e.strerror or str(e))
    click.echo(f"Error: cannot listen on http://{host}:{port}/: {why}", err=True)
    sys.exit(2)
