"""The async client: every method awaited (lists with `async for`) against the real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from _proxy import LosingProxy
from _server import Account, Receiver, Server
from conftest import STORY, TEXT, VIDEO
from rendergate import (
    AsyncRendergate,
    ConflictError,
    Generation,
    GenerationFailedError,
    InvalidArgumentError,
    NotFoundError,
    RunTimeoutError,
    verify_webhook,
)

pytestmark = pytest.mark.usefixtures("retry_after_probe")

NewAccount = Callable[..., Account]


def test_reads_and_generations(server: Server, account: NewAccount) -> None:
    acct = account(1000)

    async def scenario() -> None:
        async with AsyncRendergate(acct.key, server.url) as rg:
            assert (await rg.me())["accountId"] == acct.id
            assert TEXT in [m["id"] for m in await rg.models.list()]
            assert (await rg.models.get(TEXT))["kind"] == "text"
            assert (await rg.quote(TEXT, {"text": STORY}))["costCents"] == 1
            made = await rg.generations.create(TEXT, {"text": STORY}, idempotency_key="a-1")
            assert (await rg.generations.create(TEXT, {"text": STORY}, "a-1"))["id"] == made["id"]
            done = await rg.generations.get(made["id"], wait=30)
            assert done["status"] == "succeeded"
            await asyncio.gather(*(rg.generations.create(TEXT, {"text": STORY}) for _ in range(4)))
            ids = [g["id"] async for g in rg.generations.list(limit=2)]
            assert len(set(ids)) == 5 and ids[-1] == made["id"]
            with pytest.raises(NotFoundError):
                await rg.generations.content(made["id"])
            with pytest.raises(ConflictError):
                await rg.generations.cancel(made["id"])
            assert (await rg.generations.delete(made["id"]))["deleted"] is True
            assert (await rg.me())["balanceCents"] == 1000 - 5
            usage = await rg.usage(group_by=["model"])
            assert usage["data"] == [{"modelId": TEXT, "renders": 5, "spentCents": 5}]

    asyncio.run(scenario())


def test_uploads_run_files_and_failures(
    server: Server, account: NewAccount, png_path: Path, tmp_path: Path
) -> None:
    test_key = account(0, mode="test")

    async def scenario() -> None:
        async with AsyncRendergate(test_key.key, server.url) as rg:
            up = await rg.uploads.create(png_path)
            assert [u["id"] async for u in rg.uploads.list()] == [up["id"]]
            assert await rg.uploads.get(up["id"]) == png_path.read_bytes()
            seen: list[Generation] = []
            g = await rg.run(VIDEO, {"prompt": "in", "image": up["url"]}, on_progress=seen.append)
            assert g["status"] == "succeeded" and seen[-1] == g
            data = await rg.generations.content(g["id"])
            assert data[4:8] == b"ftyp"
            assert await rg.generations.download(g["id"], tmp_path / "v.mp4") == len(data)
            with pytest.raises(GenerationFailedError) as e:
                await rg.run(TEXT, {"text": "rendergate:fail"})
            assert e.value.generation is not None
            assert e.value.generation["error"]["code"] == "MODEL_FAILED"
            assert (await rg.uploads.delete(up["id"]))["deleted"] is True
            with pytest.raises(InvalidArgumentError):
                await rg.uploads.create_bytes(b"GIF89a....")

    asyncio.run(scenario())


def test_run_live_with_a_timeout_and_a_lost_answer(
    server: Server, account: NewAccount, png_path: Path
) -> None:
    acct = account(500)
    proxy = LosingProxy(server.url, b"POST /v1/generations ", drops=1)

    async def scenario() -> None:
        async with AsyncRendergate(acct.key, proxy.url) as rg:
            g = await rg.run(TEXT, {"text": STORY})
            assert g["status"] == "succeeded"
            image = (await rg.uploads.create(png_path))["url"]
            with pytest.raises(RunTimeoutError) as e:
                await rg.run(VIDEO, {"prompt": "x", "image": image, "duration": 10}, timeout=0.5)
            gid = e.value.generation_id
            await rg.generations.cancel(gid)
            assert (await rg.generations.wait(gid))["status"] == "refunded"
            assert rg.generations._events is True  # followed with the live events, through the proxy
            assert [x["id"] async for x in rg.generations.list()] == [gid, g["id"]]
            assert (await rg.me())["balanceCents"] == 500 - g["costCents"]

    try:
        asyncio.run(scenario())
    finally:
        proxy.close()
    assert proxy.dropped == 1


def test_webhooks(server: Server, account: NewAccount) -> None:
    acct = account(100)

    async def scenario(receiver: Receiver) -> None:
        async with AsyncRendergate(acct.key, server.url) as rg:
            endpoint = await rg.webhook_endpoints.create(receiver.url)
            assert endpoint["events"] == [
                "generation.started",
                "generation.succeeded",
                "generation.failed",
                "generation.refunded",
                "account.balance_low",
                "budget.threshold_reached",
            ]
            assert [e["id"] async for e in rg.webhook_endpoints.list()] == [endpoint["id"]]
            secret = (await rg.webhook_endpoints.get(endpoint["id"]))["secret"]
            g = await rg.run(TEXT, {"text": STORY})
            await asyncio.to_thread(receiver.wait_for, 2)
            events = [verify_webhook(d.body, d.headers, secret) for d in receiver.deliveries]
            assert sorted(e["type"] for e in events) == [
                "generation.started",
                "generation.succeeded",
            ]
            assert {e["data"]["id"] for e in events} == {g["id"]}
            assert len([d async for d in rg.webhook_endpoints.deliveries(endpoint["id"])]) == 2
            await rg.webhook_endpoints.delete(endpoint["id"])

    with Receiver() as receiver:
        asyncio.run(scenario(receiver))
