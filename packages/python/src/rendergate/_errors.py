"""The client's errors: one base class, a subclass per kind of HTTP answer, and its own.

Every error carries the API's fields: ``status`` (0 when no error answer came: a network failure, a
render that failed, a check made before sending), ``code`` (the API's code, or one of the client's:
NETWORK_ERROR, GENERATION_FAILED, GENERATION_REFUNDED, WAIT_TIMEOUT, INVALID_RESPONSE,
WEBHOOK_INVALID), ``message``, ``details`` and ``request_id`` (X-Request-Id: quote it to the
operator).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from ._types import Generation


class RendergateError(Exception):
    """Base of every error the client raises."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str,
        details: list[Any] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        generation: Generation | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: list[Any] = details if details is not None else []
        self.request_id = request_id
        self.retry_after = retry_after
        """Seconds the server asked to wait (Retry-After), when it did."""
        self.generation = generation
        """The generation, when a render ended failed or refunded (or a wait ran out)."""
        self.idempotency_key: str | None = None
        """On an error of a create: retry with this key to get the same render, charged once."""
        self.after_lost_answer = False
        """True when this answer came to a repeat of a request whose first answer was lost."""

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status else ""
        rid = f" [request {self.request_id}]" if self.request_id else ""
        again = ""
        if self.idempotency_key and (self.status in (0, 429) or self.status >= 500):
            # the create may have been made: the same key finds it, and charges nothing again
            again = f" Retry with idempotency_key={self.idempotency_key!r} to charge at most once."
        return f"{self.code}{where}: {self.message}{rid}{again}"


class InvalidRequestError(RendergateError):
    """400, 405, 413, 415, 416, 422, 431: what was sent is wrong; ``details`` names each bad field."""


class InvalidArgumentError(InvalidRequestError, ValueError):
    """A bad argument, found before anything was sent (``status`` 0): the message says what
    to fix."""


class AuthenticationError(RendergateError):
    """401: no key, an unknown key, or a revoked one."""


class InsufficientBalanceError(RendergateError):
    """402: the balance is below the price; ``details`` has costCents and balanceCents."""


class PermissionDeniedError(RendergateError):
    """403: the key may not do this."""


class NotFoundError(RendergateError):
    """404: an unknown (or another account's) model, generation, upload, endpoint or route."""


class GoneError(NotFoundError):
    """410: the file was removed after its expiresAt."""


class ConflictError(RendergateError):
    """409 (and 412): the daily cap, a budget, an idempotency key in use, a render not ready..."""


class RateLimitError(RendergateError):
    """429 after the retries: ``retry_after`` says when to try again."""


class ServerError(RendergateError):
    """5xx: the server failed; quote ``request_id`` to its operator."""


class ServiceUnavailableError(ServerError):
    """503 after the retries: the database or storage is unreachable for now."""


class APIConnectionError(RendergateError):
    """No answer: the connection failed or timed out (after the retries that were safe)."""


class InvalidResponseError(RendergateError):
    """The server answered something that is not the API's JSON (a proxy's page, say)."""


class GenerationFailedError(RendergateError):
    """run() ended with a failed or refunded render: ``generation`` holds it, refunded."""


class RunTimeoutError(RendergateError, TimeoutError):
    """The timeout given passed before the render was final. It was created once and is not
    cancelled: resume with ``generations.wait(generation_id)`` (or cancel it)."""

    def __init__(self, message: str, *, generation_id: str, generation: Generation | None) -> None:
        super().__init__(message, code="WAIT_TIMEOUT", generation=generation)
        self.generation_id = generation_id


class WebhookVerificationError(RendergateError, ValueError):
    """A webhook delivery that is not genuine or not fresh: answer it 400 and ignore it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="WEBHOOK_INVALID")


_BY_STATUS: dict[int, type[RendergateError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: InsufficientBalanceError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: InvalidRequestError,
    409: ConflictError,
    410: GoneError,
    412: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    416: InvalidRequestError,
    422: InvalidRequestError,
    429: RateLimitError,
    431: InvalidRequestError,
    503: ServiceUnavailableError,
}


def error_class(status: int) -> type[RendergateError]:
    """The class of an error answer of this HTTP status."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else RendergateError


def parse_retry_after(value: str | None) -> float | None:
    """Seconds of a Retry-After header (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    v = value.strip()
    if v.isdigit():
        return float(v)
    try:
        at = parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, (at - datetime.now(timezone.utc)).total_seconds())


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> RendergateError:
    """The error of a non-2xx answer, from the API's error body when it has one."""
    parsed: Any = None
    try:
        parsed = json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError):
        parsed = None
    fields: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
    code = fields.get("code")
    message = fields.get("message")
    details = fields.get("details")
    request_id = fields.get("requestId")
    return error_class(status)(
        message if isinstance(message, str) else f"The server answered HTTP {status}.",
        status=status,
        code=code if isinstance(code, str) else f"HTTP_{status}",
        details=details if isinstance(details, list) else None,
        request_id=request_id if isinstance(request_id, str) else headers.get("x-request-id"),
        retry_after=parse_retry_after(headers.get("retry-after")),
    )
