"""What the sync and async transports share: the request, the headers, and when to retry.

Retries: 429 and 503 are answers that mean the request was not carried out, so any request is sent
again after Retry-After (bounded). Without an answer, a request is sent again only when repeating
it cannot do anything twice: a read, a cancel or delete, or a create carrying its Idempotency-Key
(a repeat is a replay that charges nothing). A connection never made is always safe to retry.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import httpx

from ._errors import (
    APIConnectionError,
    InvalidResponseError,
    RendergateError,
    error_from_response,
    parse_retry_after,
)
from ._options import Options

__version__ = "0.1.0"
USER_AGENT = f"rendergate-python/{__version__} httpx/{httpx.__version__}"

MAX_RETRY_AFTER = 60.0
"""The longest a Retry-After is honoured; a server asking for more is asked again after this."""
MAX_BACKOFF = 8.0
IN_USE_RETRIES = 10
"""Times a repeated create waits for the first, still being processed (IDEMPOTENCY_KEY_IN_USE)."""


@dataclass
class Call:
    method: str
    path: str
    idempotent: bool
    """True when a repeat after a lost answer cannot change anything twice."""
    params: dict[str, str | int | None] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hold: float = 0
    """Seconds the server may hold the answer (Prefer: wait), added to the attempt's timeout."""
    read_timeout: float | None = None
    """For streams: the longest wait for the next bytes."""
    retry_status: bool = True
    """False: a 429 or 503 is raised at once (the caller has another way)."""


def request_of(client_headers: dict[str, str], opts: Options, call: Call) -> dict[str, Any]:
    """The keyword arguments of httpx's build_request for one attempt of a call."""
    headers = {**client_headers, **call.headers}
    kwargs: dict[str, Any] = {
        "method": call.method,
        "url": opts.base_url + call.path,
        "headers": headers,
        "params": {k: v for k, v in call.params.items() if v is not None},
    }
    if call.json is not None:
        kwargs["json"] = call.json
    elif call.content is not None:
        kwargs["content"] = call.content
    total = opts.timeout + call.hold
    kwargs["timeout"] = httpx.Timeout(total, read=call.read_timeout or total)
    return kwargs


def default_headers(opts: Options) -> dict[str, str]:
    return {
        "authorization": f"Bearer {opts.api_key}",
        "user-agent": USER_AGENT,
        "accept": "application/json",
    }


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter: about 0.5 s, 1 s, 2 s, ... up to 8 s."""
    base: float = min(MAX_BACKOFF, 0.5 * 2**attempt)
    return base / 2 + random.random() * base / 2


def status_retry_delay(
    response: httpx.Response, call: Call, attempt: int, opts: Options
) -> float | None:
    """Seconds to wait before sending again after a 429 or 503, or None when it is not retried."""
    if response.status_code not in (429, 503) or attempt >= opts.max_retries:
        return None
    if not call.retry_status:
        return None
    after = parse_retry_after(response.headers.get("retry-after"))
    return backoff(attempt) if after is None else min(after, MAX_RETRY_AFTER)


def network_retryable(exc: httpx.TransportError, call: Call) -> bool:
    """A connection never made sent nothing; any other failure only for an idempotent call."""
    return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)) or call.idempotent


def network_error(exc: httpx.TransportError, call: Call) -> APIConnectionError:
    what = "no answer in time" if isinstance(exc, httpx.TimeoutException) else str(exc)
    return APIConnectionError(
        f"{call.method} {call.path}: {what or type(exc).__name__}.", code="NETWORK_ERROR"
    )


def answer_error(response: httpx.Response, lost: bool) -> RendergateError:
    """The error of a non-2xx answer whose body has been read."""
    err = error_from_response(response.status_code, response.headers, response.content)
    err.after_lost_answer = lost
    return err


def in_use_retry(err: RendergateError, call: Call, lost: bool, tries: int) -> bool:
    """A repeated create found the first one still being processed: wait for it, then replay it."""
    return (
        lost
        and call.idempotent
        and err.code == "IDEMPOTENCY_KEY_IN_USE"
        and tries < IN_USE_RETRIES
    )


def decode_json(response: httpx.Response, call: Call) -> Any:
    try:
        return response.json()
    except ValueError as e:
        raise InvalidResponseError(
            f"{call.method} {call.path}: the answer is not JSON.",
            status=response.status_code,
            code="INVALID_RESPONSE",
            request_id=response.headers.get("x-request-id"),
        ) from e
