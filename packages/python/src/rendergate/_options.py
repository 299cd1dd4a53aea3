"""The client's settings, checked once when a client is made: each bad one names what to fix."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from ._errors import InvalidArgumentError

DEFAULT_BASE_URL = "http://localhost:8080"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3


@dataclass(frozen=True)
class Options:
    api_key: str
    base_url: str
    """The server's origin (and any path prefix it is served under), without a trailing slash."""
    timeout: float
    """Seconds one attempt may take, on top of any time the server is asked to hold it."""
    max_retries: int


def bad(field: str, message: str, code: str = "INVALID_INPUT") -> InvalidArgumentError:
    """A check failed before anything was sent: an error naming the argument."""
    return InvalidArgumentError(message, code=code, details=[{"field": field, "message": message}])


def check_seconds(field: str, value: object, *, allow_none: bool = False) -> float | None:
    """A positive, finite number of seconds (bools are not numbers here)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad(field, f"{field} must be a number of seconds, not {value!r}.")
    if not math.isfinite(value) or value <= 0:
        raise bad(field, f"{field} must be a positive, finite number of seconds, not {value!r}.")
    return float(value)


def _api_key(given: str | None) -> str:
    key = given if given is not None else os.environ.get("RENDERGATE_API_KEY")
    if not key:
        raise bad(
            "api_key",
            "No API key: pass api_key=... or set RENDERGATE_API_KEY "
            "(a key looks like rg_live_...).",
            code="API_KEY_MISSING",
        )
    if not isinstance(key, str) or any(c.isspace() or not c.isprintable() for c in key):
        raise bad("api_key", "api_key must be the key as printed, without spaces or line breaks.")
    return key


def _base_url(given: str | None) -> str:
    url = given if given is not None else os.environ.get("RENDERGATE_BASE_URL") or DEFAULT_BASE_URL
    field = "base_url" if given is not None else "RENDERGATE_BASE_URL"
    if not isinstance(url, str):
        raise bad("base_url", f"base_url must be a string such as {DEFAULT_BASE_URL!r}.")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise bad(
            "base_url",
            f"{field} {url!r} has no http:// or https:// scheme: give the server's origin, "
            f"e.g. https://render.example.com or {DEFAULT_BASE_URL}.",
        )
    if parts.query or parts.fragment:
        raise bad("base_url", f"{field} {url!r} must not carry a query or fragment.")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        raise bad(
            "base_url",
            f"{field} {url!r} ends in /v1: give the server's origin "
            f"({parts.scheme}://{parts.netloc}{path[:-3]}); the client adds /v1 itself.",
        )
    return f"{parts.scheme}://{parts.netloc}{path}"


def resolve_options(
    api_key: str | None, base_url: str | None, timeout: float, max_retries: int
) -> Options:
    """A new client's options, from its arguments and RENDERGATE_API_KEY, RENDERGATE_BASE_URL."""
    seconds = check_seconds("timeout", timeout)
    assert seconds is not None
    if (
        isinstance(max_retries, bool)
        or not isinstance(max_retries, int)
        or not 0 <= max_retries <= 10
    ):
        raise bad(
            "max_retries", f"max_retries must be an integer from 0 to 10, not {max_retries!r}."
        )
    return Options(_api_key(api_key), _base_url(base_url), seconds, max_retries)
