"""Bad input gets a clear exception naming what to fix; each error answer its class and fields;
429 is sent again after the server's Retry-After; a network failure is retried only when safe."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import rendergate._async_transport
import rendergate._sync_transport
from _proxy import LosingProxy
from _server import Account, Server, free_port
from conftest import STORY, TEXT
from rendergate import (
    APIConnectionError,
    AsyncRendergate,
    AuthenticationError,
    ConflictError,
    InsufficientBalanceError,
    InvalidArgumentError,
    InvalidRequestError,
    RateLimitError,
    Rendergate,
    RendergateError,
)

pytestmark = pytest.mark.usefixtures("retry_after_probe")

NewAccount = Callable[..., Account]


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RENDERGATE_API_KEY", raising=False)
    with pytest.raises(InvalidArgumentError) as e:
        Rendergate()
    assert isinstance(e.value, ValueError) and e.value.status == 0
    assert e.value.code == "API_KEY_MISSING" and "RENDERGATE_API_KEY" in str(e.value)
    with pytest.raises(InvalidArgumentError, match="without spaces"):
        Rendergate("rg_live_abc def")


def test_the_environment_gives_key_and_server(
    server: Server, account: NewAccount, monkeypatch: pytest.MonkeyPatch
) -> None:
    acct = account(0)
    monkeypatch.setenv("RENDERGATE_API_KEY", acct.key)
    monkeypatch.setenv("RENDERGATE_BASE_URL", server.url + "/")
    with Rendergate() as rg:
        assert rg.me()["accountId"] == acct.id


@pytest.mark.parametrize(
    "url, says",
    [
        ("localhost:8080", "no http:// or https:// scheme"),
        ("127.0.0.1:8080", "no http:// or https:// scheme"),
        ("render.example.com", "no http:// or https:// scheme"),
        ("ftp://render.example.com", "no http:// or https:// scheme"),
        ("https://render.example.com/v1", "ends in /v1: give the server's origin"),
        ("https://render.example.com/?x=1", "must not carry a query"),
    ],
)
def test_a_base_url_that_is_not_an_origin(url: str, says: str) -> None:
    with pytest.raises(InvalidArgumentError) as e:
        Rendergate("rg_live_x", url)
    assert says in str(e.value) and e.value.details[0]["field"] == "base_url"


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "5", True])
def test_a_timeout_that_is_not_a_time(bad: Any) -> None:
    with pytest.raises(InvalidArgumentError, match="timeout must be"):
        Rendergate("rg_live_x", timeout=bad)
    with Rendergate("rg_live_x") as rg, pytest.raises(InvalidArgumentError, match="timeout"):
        rg.run(TEXT, {"text": STORY}, timeout=bad)


def test_arguments_refused_before_anything_is_sent(
    server: Server, account: NewAccount, tmp_path: Path, png_path: Path
) -> None:
    acct = account(100)
    sent: list[httpx.Request] = []
    with httpx.Client(event_hooks={"request": [sent.append]}) as http:
        rg = Rendergate(acct.key, server.url, http_client=http)
        notes = tmp_path / "notes.txt"
        notes.write_text("not an image")
        with pytest.raises(InvalidArgumentError) as e:
            rg.uploads.create(notes)
        assert "notes.txt is not a PNG, JPEG or WebP image" in str(e.value)
        with pytest.raises(FileNotFoundError):
            rg.uploads.create(tmp_path / "missing.png")
        with pytest.raises(InvalidArgumentError, match="directory"):
            rg.uploads.create(tmp_path)
        with pytest.raises(InvalidArgumentError, match="idempotency_key"):
            rg.generations.create(TEXT, {"text": STORY}, idempotency_key="has space")
        with pytest.raises(InvalidArgumentError, match="wait must be"):
            rg.generations.get("gen_x", wait=61)
        with pytest.raises(InvalidArgumentError, match="an id is required"):
            rg.generations.get("")
        with pytest.raises(InvalidArgumentError, match="status must be one of"):
            rg.generations.list(status="done")  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError, match="page size"):
            rg.generations.list(limit=500)
        with pytest.raises(InvalidArgumentError, match="'week' is not one"):
            rg.usage(group_by=["week"])  # type: ignore[list-item]
        with pytest.raises(InvalidArgumentError, match="inputs must be a mapping"):
            rg.quote(TEXT, [("text", STORY)])  # type: ignore[arg-type]
        assert sent == []
        rg.close()


def test_each_error_answer_has_its_class_and_fields(server: Server, account: NewAccount) -> None:
    acct = account(0, dailyCapCents=1)
    with Rendergate(acct.key, server.url) as rg:
        with pytest.raises(InvalidRequestError) as bad:
            rg.quote("acme/none", {})
        assert bad.value.status == 400 and bad.value.code == "INVALID_INPUT"
        assert bad.value.details[0]["field"] == "modelId"
        assert (bad.value.request_id or "").startswith("req_")
        with pytest.raises(InvalidRequestError) as fields:
            rg.quote(TEXT, {"text": "", "mode": "poem", "extra": 1})
        assert {d["field"] for d in fields.value.details} == {
            "inputs.text",
            "inputs.mode",
            "inputs.extra",
        }
        with pytest.raises(InsufficientBalanceError) as poor:
            rg.generations.create(TEXT, {"text": STORY}, idempotency_key="poor-1")
        assert poor.value.status == 402 and poor.value.details[0]["costCents"] == 1
        assert poor.value.idempotency_key == "poor-1"
    test = account(0, mode="test", dailyCapCents=1)
    with Rendergate(test.key, server.url) as rg:
        rg.generations.create(TEXT, {"text": STORY})
        with pytest.raises(ConflictError) as cap:
            rg.generations.create(TEXT, {"text": STORY})
        assert cap.value.code == "API_KEY_DAILY_CAP" and cap.value.details[0]["capCents"] == 1
    server.admin("DELETE", f"/keys/{acct.key_id}")
    with Rendergate(acct.key, server.url) as rg, pytest.raises(AuthenticationError) as revoked:
        rg.me()
    assert revoked.value.status == 401 and revoked.value.code == "API_KEY_REVOKED"
    with Rendergate("rg_live_" + "1" * 40, server.url) as rg, pytest.raises(AuthenticationError):
        rg.me()


def test_429_is_sent_again_after_retry_after(
    server: Server, account: NewAccount, monkeypatch: pytest.MonkeyPatch
) -> None:
    acct = account(0, rateLimitPerMinute=2)
    waits: list[float] = []
    monkeypatch.setattr(rendergate._sync_transport, "_sleep", waits.append)
    answers: list[tuple[int, str | None]] = []

    def seen(r: httpx.Response) -> None:
        answers.append((r.status_code, r.headers.get("retry-after")))

    with httpx.Client(event_hooks={"response": [seen]}) as http:
        with Rendergate(acct.key, server.url, max_retries=2, http_client=http) as rg:
            rg.me()
            rg.me()
            with pytest.raises(RateLimitError) as e:
                rg.me()
    refused = answers[2:]
    if len(refused) < 3:  # the minute turned between the calls: nothing to see this time
        pytest.skip("the rate limit's window reset during the test")
    assert [s for s, _ in refused] == [429, 429, 429]
    assert waits == [float(ra or "nan") for _, ra in refused[:2]]  # each Retry-After, honoured
    assert all(1 <= w <= 60 for w in waits)
    assert e.value.status == 429 and e.value.code == "RATE_LIMITED"
    assert e.value.retry_after == float(refused[2][1] or "nan")


def test_429_async(server: Server, account: NewAccount, monkeypatch: pytest.MonkeyPatch) -> None:
    acct = account(0, rateLimitPerMinute=1)
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(rendergate._async_transport, "_sleep", record)

    async def scenario() -> RendergateError:
        async with AsyncRendergate(acct.key, server.url, max_retries=3) as rg:
            await rg.me()
            try:
                await rg.me()
            except RendergateError as e:
                return e
        raise AssertionError("not refused")

    err = asyncio.run(scenario())
    if not waits:
        pytest.skip("the rate limit's window reset during the test")
    assert isinstance(err, RateLimitError) and len(waits) == 3
    assert all(1 <= w <= 60 for w in waits)


def test_network_errors_are_retried_only_when_safe(
    monkeypatch: pytest.MonkeyPatch, png_path: Path
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(rendergate._sync_transport, "_sleep", waits.append)
    closed = f"http://127.0.0.1:{free_port()}"
    with Rendergate("rg_live_x", closed, max_retries=2) as rg:
        with pytest.raises(APIConnectionError) as e:
            rg.me()
        assert e.value.status == 0 and e.value.code == "NETWORK_ERROR"
        assert len(waits) == 2  # a connection never made is safe to retry
        with pytest.raises(APIConnectionError) as up:
            rg.uploads.create(png_path)
        assert len(waits) == 4  # even for an upload: nothing reached the server
        with pytest.raises(APIConnectionError) as created:
            rg.generations.create(TEXT, {"text": STORY}, idempotency_key="k-1")
        assert "idempotency_key='k-1'" in str(created.value)
    assert up.value.idempotency_key is None


def test_a_lost_upload_answer_is_not_sent_again(
    server: Server, account: NewAccount, png_path: Path
) -> None:
    acct = account(0)
    proxy = LosingProxy(server.url, b"POST /v1/uploads ", drops=1)
    try:
        with Rendergate(acct.key, proxy.url) as rg, pytest.raises(APIConnectionError):
            rg.uploads.create(png_path)  # stored, but a repeat could store it twice
    finally:
        proxy.close()
    with Rendergate(acct.key, server.url) as rg:
        assert len(list(rg.uploads.list())) == 1
