"""verify_webhook against signatures made by the `standardwebhooks` package (the reference
implementation the server's own signing is checked with), and every way a delivery is refused.
A real delivery from the server is verified in test_sync_client.py and test_async_client.py."""

from __future__ import annotations

import base64
import json
import subprocess
import time

import pytest

from _server import ROOT
from rendergate import WebhookVerificationError, verify_webhook

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
BODY = json.dumps({"type": "generation.succeeded", "data": {"id": "gen_1"}})


def reference_signature(msg_id: str, timestamp: int, body: str) -> str:
    script = (
        "const { Webhook } = require('standardwebhooks');"
        "const [id, ts, body, secret] = process.argv.slice(1);"
        "process.stdout.write(new Webhook(secret).sign(id, new Date(ts * 1000), body));"
    )
    out = subprocess.run(
        ["node", "-e", script, msg_id, str(timestamp), body, SECRET],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


def headers(msg_id: str, ts: int, sig: str) -> dict[str, str]:
    return {"Webhook-Id": msg_id, "Webhook-Timestamp": str(ts), "Webhook-Signature": sig}


def test_a_reference_signature_verifies() -> None:
    now = int(time.time())
    sig = reference_signature("msg_1", now, BODY)
    event = verify_webhook(BODY.encode(), headers("msg_1", now, sig), SECRET)
    assert event["data"]["id"] == "gen_1"
    # several signatures (a rotated secret): any one that matches will do
    both = f"v1,{base64.b64encode(b'x' * 32).decode()} {sig}"
    assert verify_webhook(BODY, list(headers("msg_1", now, both).items()), SECRET) == event


@pytest.mark.parametrize(
    "change, says",
    [
        ("body", "No webhook-signature matches"),
        ("id", "No webhook-signature matches"),
        ("secret", "No webhook-signature matches"),
        ("stale", "too far from now"),
        ("future", "too far from now"),
        ("missing", "headers are required"),
        ("timestamp", "not a Unix time"),
        ("version", "No webhook-signature matches"),
        ("not-a-secret", "not a whsec_ secret"),
    ],
)
def test_refusals(change: str, says: str) -> None:
    now = int(time.time())
    ts = now - 600 if change == "stale" else now + 600 if change == "future" else now
    sig = reference_signature("msg_1", ts, BODY)
    h = headers("msg_2" if change == "id" else "msg_1", ts, sig)
    body = BODY.replace("gen_1", "gen_2") if change == "body" else BODY
    secret = SECRET
    if change == "secret":
        secret = "whsec_" + base64.b64encode(b"another secret of 32 bytes......").decode()
    if change == "missing":
        del h["Webhook-Signature"]
    if change == "timestamp":
        h["Webhook-Timestamp"] = "yesterday"
    if change == "version":
        h["Webhook-Signature"] = sig.replace("v1,", "v2,")
    if change == "not-a-secret":
        secret = "whsec_!!!"
    with pytest.raises(WebhookVerificationError, match=says) as e:
        verify_webhook(body, h, secret)
    assert e.value.code == "WEBHOOK_INVALID" and isinstance(e.value, ValueError)
