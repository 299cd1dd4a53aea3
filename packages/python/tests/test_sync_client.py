"""Every method of the sync client against the real server."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from _server import Account, Receiver, Server
from conftest import STORY, TEXT, VIDEO
from rendergate import (
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    Rendergate,
    verify_webhook,
)

pytestmark = pytest.mark.usefixtures("retry_after_probe")

NewAccount = Callable[..., Account]


def test_account_catalog_model_and_quote(server: Server, account: NewAccount) -> None:
    acct = account(500)
    with Rendergate(acct.key, server.url) as rg:
        me = rg.me()
        assert me["accountId"] == acct.id
        assert me["balanceCents"] == 500 and me["currency"] == "EUR"
        assert me["key"]["id"] == acct.key_id and me["key"]["mode"] == "live"
        ids = [m["id"] for m in rg.models.list()]
        assert {TEXT, VIDEO, "rendergate/start-end-to-video"} <= set(ids)
        detail = rg.models.get(VIDEO)
        assert detail["inputSchema"]["type"] == "object"
        assert [f["name"] for f in detail["fields"]][:2] == ["prompt", "image"]
        q = rg.quote(VIDEO, {"prompt": "push in", "image": "https://example.com/a.png"})
        assert q["costCents"] == 30 and q["inputs"]["duration"] == 5
        assert rg.me()["balanceCents"] == 500  # a quote charges nothing


def test_create_get_list_cancel_delete(server: Server, account: NewAccount) -> None:
    acct = account(1000)
    with Rendergate(acct.key, server.url) as rg:
        key = str(uuid.uuid4())
        made = rg.generations.create(TEXT, {"text": STORY}, idempotency_key=key)
        assert made["status"] in ("queued", "succeeded") and made["costCents"] == 1
        again = rg.generations.create(TEXT, {"text": STORY}, idempotency_key=key)
        assert again["id"] == made["id"]  # a replay: charged once
        done = rg.generations.get(made["id"], wait=30)
        assert done["status"] == "succeeded" and done["textOutput"]
        for _ in range(4):
            rg.generations.create(TEXT, {"text": STORY})
        listed = list(rg.generations.list(limit=2))
        assert len(listed) == 5 and len({g["id"] for g in listed}) == 5
        assert listed[-1]["id"] == made["id"]  # newest first, across three pages
        first_two = list(itertools.islice(rg.generations.list(limit=2), 2))
        assert [g["id"] for g in first_two] == [g["id"] for g in listed[:2]]
        assert all(g["status"] != "failed" for g in rg.generations.list(status="succeeded"))
        assert rg.me()["balanceCents"] == 1000 - 5
        # a text render has no file; a succeeded one cannot be cancelled
        with pytest.raises(NotFoundError) as nf:
            rg.generations.content(made["id"])
        assert nf.value.code == "CONTENT_NOT_FOUND" and nf.value.status == 404
        with pytest.raises(ConflictError) as cf:
            rg.generations.cancel(done["id"])
        assert cf.value.code == "GENERATION_NOT_CANCELLABLE"
        assert rg.generations.delete(made["id"]) == {"id": made["id"], "deleted": True}
        with pytest.raises(NotFoundError) as gone:
            rg.generations.get(made["id"])
        assert gone.value.code == "GENERATION_NOT_FOUND" and gone.value.request_id


def test_cancel_refunds_a_queued_render(
    server: Server, account: NewAccount, png_path: Path
) -> None:
    acct = account(1000)
    with Rendergate(acct.key, server.url) as rg:
        image = rg.uploads.create(png_path)["url"]
        g = rg.generations.create(
            VIDEO, {"prompt": "slow push in", "image": image, "duration": 10}
        )
        cancelled = rg.generations.cancel(g["id"])  # a 10 s video is still rendering
        assert cancelled["status"] == "refunded"
        assert cancelled["refundedCents"] == cancelled["costCents"] == 60
        assert rg.me()["balanceCents"] == 1000
        assert rg.generations.cancel(g["id"])["status"] == "refunded"  # again: unchanged


def test_video_content_download_and_test_keys(
    server: Server, account: NewAccount, png_path: Path, tmp_path: Path
) -> None:
    acct = account(0, mode="test")  # a test key: renders made at once, nothing charged
    with Rendergate(acct.key, server.url) as rg:
        upload = rg.uploads.create(png_path)
        assert upload["contentType"] == "image/png"
        assert (upload["width"], upload["height"]) == (64, 48)
        g = rg.run(VIDEO, {"prompt": "push in", "image": upload["url"]})
        assert g["status"] == "succeeded" and g.get("mode") == "test"
        assert g["contentType"] == "video/mp4"
        data = rg.generations.content(g["id"])
        assert data[4:8] == b"ftyp"  # an MP4's first box
        target = tmp_path / "clip.mp4"
        assert rg.generations.download(g["id"], target) == len(data)
        assert target.read_bytes() == data
        assert not list(tmp_path.glob("*.part-*"))
        assert rg.me()["balanceCents"] == 0


def test_uploads_list_get_delete_and_refusals(
    server: Server, account: NewAccount, png_path: Path, tmp_path: Path
) -> None:
    acct = account(0)
    with Rendergate(acct.key, server.url) as rg:
        a = rg.uploads.create(png_path)
        b = rg.uploads.create_bytes(png_path.read_bytes())
        assert [u["id"] for u in rg.uploads.list()] == [b["id"], a["id"]]
        assert rg.uploads.get(a["id"]) == png_path.read_bytes()
        assert rg.uploads.delete(a["id"]) == {"id": a["id"], "deleted": True}
        assert [u["id"] for u in rg.uploads.list()] == [b["id"]]
        # a PNG's signature on bytes that do not decode: the server's own check, naming the body
        broken = tmp_path / "broken.png"
        broken.write_bytes(png_path.read_bytes()[:40])
        with pytest.raises(InvalidRequestError) as e:
            rg.uploads.create(broken)
        assert e.value.status == 400 and e.value.code == "INVALID_INPUT"
        assert e.value.details[0]["field"] == "body"


def test_usage_groups_what_was_spent(server: Server, account: NewAccount) -> None:
    acct = account(100)
    with Rendergate(acct.key, server.url) as rg:
        for _ in range(3):
            rg.generations.create(TEXT, {"text": STORY})
        total = rg.usage()
        assert total["data"] == [{"renders": 3, "spentCents": 3}]
        today = total["to"]
        by = rg.usage(from_=date.fromisoformat(today), to=today, group_by=["model", "key"])
        assert by == {
            "from": today,
            "to": today,
            "data": [{"modelId": TEXT, "keyId": acct.key_id, "renders": 3, "spentCents": 3}],
        }
        assert rg.usage(group_by="day")["data"] == [{"day": today, "renders": 3, "spentCents": 3}]
        with pytest.raises(InvalidRequestError) as e:
            rg.usage(from_="2026-02-30")
        assert e.value.details == [
            {"field": "from", "message": "must be a calendar date written YYYY-MM-DD"}
        ]


def test_webhook_endpoints_and_a_real_signed_delivery(server: Server, account: NewAccount) -> None:
    acct = account(100)
    with Receiver() as receiver, Rendergate(acct.key, server.url) as rg:
        endpoint = rg.webhook_endpoints.create(receiver.url, events=["generation.succeeded"])
        secret = endpoint["secret"]
        assert secret.startswith("whsec_")
        assert [e["id"] for e in rg.webhook_endpoints.list()] == [endpoint["id"]]
        assert "secret" not in next(iter(rg.webhook_endpoints.list()))
        assert rg.webhook_endpoints.get(endpoint["id"])["secret"] == secret
        g = rg.run(TEXT, {"text": STORY})
        delivery = receiver.wait_for(1)[0]
        event = verify_webhook(delivery.body, delivery.headers, secret)
        assert event["type"] == "generation.succeeded" and event["data"]["id"] == g["id"]
        assert Rendergate.verify_webhook(delivery.body.decode(), delivery.headers, secret) == event
        sent = list(rg.webhook_endpoints.deliveries(endpoint["id"]))
        assert sent and sent[0]["generationId"] == g["id"]
        assert rg.webhook_endpoints.delete(endpoint["id"])["deleted"] is True
