"""The async client: AsyncRendergate, the sync client's methods awaited (lists: `async for`)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import cast

import httpx

from . import _calls as calls
from ._follow import Deadline, Progress, Reporter, is_final, outcome
from ._async_generations import AsyncGenerations
from ._options import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, check_seconds, resolve_options
from ._async_resources import AsyncModels, AsyncUploads, AsyncWebhookEndpoints
from ._async_transport import AsyncTransport
from ._types import Generation, InputValue, Me, Quote, Usage, UsageGroup
from ._webhooks import verify_webhook


class AsyncRendergate:
    """A client of one server with one key. Use it in `async with`, or `await close()` it."""

    verify_webhook = staticmethod(verify_webhook)

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """`api_key` defaults to RENDERGATE_API_KEY; `base_url`, the server's origin (without
        /v1), to RENDERGATE_BASE_URL, else http://localhost:8080. `timeout`: seconds one attempt
        may take; `max_retries`: attempts after the first on 429, 503 and safe network errors."""
        opts = resolve_options(api_key, base_url, timeout, max_retries)
        self._t = AsyncTransport(opts, http_client)
        self.models = AsyncModels(self._t)
        self.generations = AsyncGenerations(self._t)
        self.uploads = AsyncUploads(self._t)
        self.webhook_endpoints = AsyncWebhookEndpoints(self._t)

    async def me(self) -> Me:
        """The account and the key in use."""
        return cast(Me, await self._t.json(calls.call("getMe")))

    async def quote(self, model_id: str, inputs: Mapping[str, InputValue]) -> Quote:
        """The price of a render (nothing is charged)."""
        return cast(Quote, await self._t.json(calls.quote(model_id, inputs)))

    async def usage(
        self,
        from_: str | datetime.date | None = None,
        to: str | datetime.date | None = None,
        group_by: str | Sequence[UsageGroup] | None = None,
    ) -> Usage:
        """Renders and spend from `from_` to `to` (days, both included; default the last 30),
        grouped by any of "day", "model", "key", "member" (none: one row of totals)."""
        return cast(Usage, await self._t.json(calls.usage(from_, to, group_by)))

    async def run(
        self,
        model_id: str,
        inputs: Mapping[str, InputValue],
        *,
        on_progress: Progress | None = None,
        timeout: float | None = None,
        idempotency_key: str | None = None,
    ) -> Generation:
        """Creates a render once (whatever the retries) and follows it to its end. Returns it when
        it succeeded; raises GenerationFailedError carrying it when it failed or was refunded, and
        RunTimeoutError naming it when `timeout` seconds pass first (it is not cancelled)."""
        deadline = Deadline(check_seconds("timeout", timeout, allow_none=True))
        report = Reporter(on_progress)
        # With nothing to report, the create itself may be held until the end: one round trip.
        hold = None if on_progress is not None else deadline.hold(False)
        created = await self.generations.create(model_id, inputs, idempotency_key, wait=hold)
        report(created)
        if not is_final(created):
            created = await self.generations._follow(created["id"], deadline, report)
        return outcome(created)

    async def close(self) -> None:
        await self._t.close()

    async def __aenter__(self) -> AsyncRendergate:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
