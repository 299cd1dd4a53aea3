"""The request of each method, built and checked the same way for the sync and async clients.

Arguments a server would refuse are refused here first, naming the argument, when the client can
tell without asking; everything else (a model's inputs, say) is the server's to check.
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ._http import Call
from ._operations import op
from ._options import bad
from ._types import InputValue, UsageGroup

IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")
STATUSES = ("queued", "succeeded", "failed", "refunded")
GROUPS: tuple[UsageGroup, ...] = ("day", "model", "key", "member")


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def _text(field: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise bad(field, f"{field} must be a non-empty string, not {value!r}.")
    return value


def _inputs(inputs: object) -> dict[str, Any]:
    if not isinstance(inputs, Mapping):
        raise bad("inputs", f"inputs must be a mapping of input names to values, not {inputs!r}.")
    return dict(inputs)


def _wait(wait: int | None) -> dict[str, str]:
    if wait is None:
        return {}
    if isinstance(wait, bool) or not isinstance(wait, int) or not 1 <= wait <= 60:
        raise bad("wait", f"wait must be whole seconds from 1 to 60, not {wait!r}.")
    return {"prefer": f"wait={wait}"}


def call(name: str, id: str | None = None, **kwargs: Any) -> Call:
    method, path = op(name, id)
    kwargs.setdefault("idempotent", method != "POST")
    return Call(method=method, path=path, **kwargs)


def get_model(model_id: str) -> Call:
    return call("getModel", params={"id": _text("model_id", model_id)})


def quote(model_id: str, inputs: Mapping[str, InputValue]) -> Call:
    body = {"modelId": _text("model_id", model_id), "inputs": _inputs(inputs)}
    return call("createQuote", json=body, idempotent=True)


def create_generation(
    model_id: str, inputs: Mapping[str, InputValue], key: str, wait: int | None
) -> Call:
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
        raise bad("idempotency_key", "idempotency_key must be 1-255 printable ASCII characters.")
    body = {"modelId": _text("model_id", model_id), "inputs": _inputs(inputs)}
    # Keyed: a repeat after a lost answer is a replay that charges nothing, so it is retried.
    headers = {"idempotency-key": key, **_wait(wait)}
    return call("createGeneration", json=body, idempotent=True, headers=headers, hold=wait or 0)


def get_generation(generation_id: str, wait: int | None = None) -> Call:
    return call("getGeneration", generation_id, headers=_wait(wait), hold=wait or 0)


def list_generations(
    limit: int | None, status: str | None, model_id: str | None, cursor: str | None
) -> Call:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise bad(
            "limit", f"limit (the page size) must be an integer from 1 to 100, not {limit!r}."
        )
    if limit is not None and not 1 <= limit <= 100:
        raise bad("limit", f"limit (the page size) must be from 1 to 100, not {limit}.")
    if status is not None and status not in STATUSES:
        raise bad("status", f"status must be one of {', '.join(STATUSES)}, not {status!r}.")
    params: dict[str, str | int | None] = {
        "limit": limit,
        "status": status,
        "modelId": model_id,
        "cursor": cursor,
    }
    return call("listGenerations", params=params)


def cancel_generation(generation_id: str) -> Call:
    # A cancel repeated after a lost answer finds the render refunded and answers it unchanged.
    return call("cancelGeneration", generation_id, idempotent=True)


def page(name: str, cursor: str | None, id: str | None = None) -> Call:
    return call(name, id, params={"cursor": cursor})


def events(generation_id: str, last_id: str | None, read_timeout: float) -> Call:
    headers = {"accept": "text/event-stream"}
    if last_id is not None:
        headers["last-event-id"] = last_id
    # Past its share of streams the server answers 429: the caller reads instead of waiting.
    return call(
        "streamGenerationEvents",
        generation_id,
        headers=headers,
        read_timeout=read_timeout,
        retry_status=False,
    )


def content(generation_id: str) -> Call:
    return call("getGenerationContent", generation_id, headers={"accept": "*/*"})


def upload(data: bytes, content_type: str) -> Call:
    # Not keyed: a repeat after a lost answer could store the image twice (429/503 are retried).
    return call("createUpload", content=data, headers={"content-type": content_type})


def create_webhook_endpoint(url: str, events: Sequence[str] | None) -> Call:
    body: dict[str, Any] = {"url": _text("url", url)}
    if events is not None:
        if isinstance(events, str):
            raise bad("events", "events must be a list of event types, not one string.")
        body["events"] = list(events)
    return call("createWebhookEndpoint", json=body)


def _day(field: str, value: str | datetime.date | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    raise bad(field, f"{field} must be a date (datetime.date or 'YYYY-MM-DD'), not {value!r}.")


def usage(
    from_: str | datetime.date | None,
    to: str | datetime.date | None,
    group_by: str | Sequence[UsageGroup] | None,
) -> Call:
    if isinstance(group_by, str):
        groups = [g.strip() for g in group_by.split(",")]
    else:
        groups = list(group_by or [])
    for g in groups:
        if g not in GROUPS:
            raise bad("group_by", f"group_by takes {', '.join(GROUPS)}; {g!r} is not one.")
    params: dict[str, str | int | None] = {
        "from": _day("from_", from_),
        "to": _day("to", to),
        "groupBy": ",".join(groups) or None,
    }
    return call("getUsage", params=params)
