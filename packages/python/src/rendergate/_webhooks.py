"""Verifying a webhook delivery (Standard Webhooks, standardwebhooks.com): the signature is an
HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the base64-decoded secret after
`whsec_`, compared in constant time, over the exact raw body; a timestamp more than the tolerance
away from now is refused (a replayed old delivery)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from typing import cast

from ._errors import WebhookVerificationError
from ._types import WebhookEvent

Headers = Mapping[str, str] | Iterable[tuple[str, str]]


def _header(headers: Headers, name: str) -> str | None:
    items = headers.items() if isinstance(headers, Mapping) else headers
    found = [v for k, v in items if k.lower() == name]
    return " ".join(found) if found else None


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def verify_webhook(
    payload: bytes | str,
    headers: Headers,
    secret: str,
    *,
    tolerance: float = 300,
    now: float | None = None,
) -> WebhookEvent:
    """The event of a genuine, fresh delivery; WebhookVerificationError otherwise.

    `payload` is the raw body as received (not parsed and dumped again); `headers` the request's
    headers (any mapping, or (name, value) pairs; names in any case); `secret` the endpoint's
    `whsec_...` secret.
    """
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError(
            "The webhook-id, webhook-timestamp and webhook-signature headers are required."
        )
    if not timestamp.isdigit() or len(timestamp) > 12:
        raise WebhookVerificationError("webhook-timestamp is not a Unix time in seconds.")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now.")
    key = _b64(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    if not key:
        raise WebhookVerificationError("The secret is not a whsec_ secret.")
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = hmac.new(key, signed, hashlib.sha256).digest()
    for candidate in signatures.split(" "):
        version, _, sig = candidate.partition(",")
        given = _b64(sig) if version == "v1" else None
        if given is not None and hmac.compare_digest(given, expected):
            try:
                return cast(WebhookEvent, json.loads(body))
            except ValueError as e:
                raise WebhookVerificationError("The signed body is not JSON.") from e
    raise WebhookVerificationError("No webhook-signature matches the body.")
