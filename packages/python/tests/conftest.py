"""Fixtures: one real server for the whole run, accounts on it, and a PNG on disk.

`retry_after_probe` makes a request that the server refuses with 429 and that the client must
send again after the Retry-After the server gives (up to a minute: rate limits count per minute).
It runs in a thread from the first test that asks for it, so the wait overlaps the other tests;
tests/test_zz_retry_after.py collects its outcome last.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from _server import Account, Server, new_account, png, start_server
from rendergate import Rendergate

TEXT = "rendergate/shot-list"
VIDEO = "rendergate/image-to-video"
STORY = (
    "The camera rises over the harbour at dawn. Fishing boats leave one by one. "
    "A gull lands on the pier."
)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    s = start_server()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def account(server: Server) -> Callable[..., Account]:
    """account(cents, **key options): a new account with credit and a key."""

    def make(cents: int = 1000, **key: Any) -> Account:
        return new_account(server, cents, **key)

    return make


@pytest.fixture
def png_path(tmp_path: Path) -> Path:
    p = tmp_path / "frame.png"
    p.write_bytes(png())
    return p


@dataclass
class Probe:
    done: threading.Event = field(default_factory=threading.Event)
    answers: list[tuple[int, str | None]] = field(default_factory=list)
    """(status, Retry-After) of each answer to the request sent past the limit."""
    waited: float = 0.0
    result: Any = None
    error: BaseException | None = None


def _probe(server: Server, probe: Probe) -> None:
    try:
        acct = new_account(server, 0, rateLimitPerMinute=1)

        def seen(r: httpx.Response) -> None:
            probe.answers.append((r.status_code, r.headers.get("retry-after")))

        with Rendergate(acct.key, server.url, max_retries=0) as rg:
            rg.me()  # the minute's one request
        with httpx.Client(event_hooks={"response": [seen]}) as http:
            with Rendergate(acct.key, server.url, max_retries=2, http_client=http) as rg:
                started = time.monotonic()
                probe.result = rg.me()
                probe.waited = time.monotonic() - started
    except BaseException as e:  # reported by the test that collects it
        probe.error = e
    finally:
        probe.done.set()


@pytest.fixture(scope="session")
def retry_after_probe(server: Server) -> Probe:
    probe = Probe()
    threading.Thread(target=_probe, args=(server, probe), daemon=True).start()
    return probe
