"""run(): created once whatever the retries, followed to the end, a failure raised with its render,
a timeout that names the render to resume; against the real server, sync."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from _proxy import LosingProxy
from _server import Account, Server
from conftest import STORY, TEXT, VIDEO
from rendergate import (
    GenerationFailedError,
    Generation,
    Rendergate,
    RunTimeoutError,
)

pytestmark = pytest.mark.usefixtures("retry_after_probe")

NewAccount = Callable[..., Account]


def test_run_a_text_model(server: Server, account: NewAccount) -> None:
    acct = account(500)
    seen: list[Generation] = []
    with Rendergate(acct.key, server.url) as rg:
        g = rg.run(TEXT, {"text": STORY, "mode": "shot_list"}, on_progress=seen.append)
        assert g["status"] == "succeeded"
        assert "1." in g["textOutput"]
        assert seen[0]["status"] == "queued" and seen[-1] == g
        assert rg.me()["balanceCents"] == 500 - g["costCents"]
        # run() followed the render with the server's live events
        assert rg.generations._events is True


def test_run_a_video_model_with_progress(
    server: Server, account: NewAccount, png_path: Path
) -> None:
    acct = account(500)
    seen: list[Generation] = []
    with Rendergate(acct.key, server.url) as rg:
        image = rg.uploads.create(png_path)["url"]
        g = rg.run(VIDEO, {"prompt": "a slow push in", "image": image}, on_progress=seen.append)
        assert g["status"] == "succeeded" and g["progress"] == 1
        assert g["contentType"] == "video/mp4" and g["contentUrl"].endswith("/content")
        assert rg.generations.content(g["id"])[4:8] == b"ftyp"
        assert seen[0]["status"] == "queued"
        # each state reported once: no two reports in a row the same
        keys = [(s["status"], s["progress"], s["queuePosition"], s["startedAt"]) for s in seen]
        assert all(a != b for a, b in zip(keys, keys[1:]))
        assert rg.me()["balanceCents"] == 500 - 30


def test_a_failed_render_raises_with_the_generation(server: Server, account: NewAccount) -> None:
    acct = account(0, mode="test")
    with Rendergate(acct.key, server.url) as rg:
        with pytest.raises(GenerationFailedError) as e:
            rg.run(TEXT, {"text": "rendergate:fail please"})
        g = e.value.generation
        assert g is not None and g["status"] == "refunded"
        assert g["refundedCents"] == g["costCents"]
        assert e.value.code == "GENERATION_REFUNDED" and e.value.status == 0
        assert g["error"]["code"] == "MODEL_FAILED"
        assert g["id"] in str(e.value) and "MODEL_FAILED" in str(e.value)


def test_a_timeout_names_the_render_to_resume(
    server: Server, account: NewAccount, png_path: Path
) -> None:
    acct = account(500)
    with Rendergate(acct.key, server.url) as rg:
        image = rg.uploads.create(png_path)["url"]
        with pytest.raises(RunTimeoutError) as e:
            rg.run(VIDEO, {"prompt": "push in", "image": image, "duration": 10}, timeout=0.5)
        assert isinstance(e.value, TimeoutError)
        gid = e.value.generation_id
        assert gid.startswith("gen_") and gid in str(e.value)
        assert e.value.code == "WAIT_TIMEOUT" and "generations.wait" in str(e.value)
        assert e.value.generation is not None and e.value.generation["status"] == "queued"
        # created once and still going: the caller decides (here: cancel, then see it end)
        assert [x["id"] for x in rg.generations.list()] == [gid]
        assert rg.me()["balanceCents"] == 500 - 60
        rg.generations.cancel(gid)
        assert rg.generations.wait(gid, timeout=30)["status"] == "refunded"
        assert rg.me()["balanceCents"] == 500


def test_run_creates_once_when_the_answer_is_lost(server: Server, account: NewAccount) -> None:
    acct = account(500)
    proxy = LosingProxy(server.url, b"POST /v1/generations ", drops=2)
    try:
        with Rendergate(acct.key, proxy.url) as rg:
            g = rg.run(TEXT, {"text": STORY})
    finally:
        proxy.close()
    assert proxy.dropped == 2  # the create was made, its answer lost twice, then replayed
    with Rendergate(acct.key, server.url) as rg:
        assert [x["id"] for x in rg.generations.list()] == [g["id"]]
        assert rg.me()["balanceCents"] == 500 - g["costCents"]


def test_a_lost_delete_answer_is_still_deleted(server: Server, account: NewAccount) -> None:
    acct = account(500)
    with Rendergate(acct.key, server.url) as rg:
        g = rg.run(TEXT, {"text": STORY})
    proxy = LosingProxy(server.url, b"DELETE /v1/generations/", drops=1)
    try:
        with Rendergate(acct.key, proxy.url) as rg:
            assert rg.generations.delete(g["id"]) == {"id": g["id"], "deleted": True}
    finally:
        proxy.close()
    assert proxy.dropped == 1
