"""Requests of the async client, with the retries of _http.py (asyncio.sleep between tries)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from . import _http
from ._http import Call
from ._options import Options

_sleep = asyncio.sleep  # looked up at each wait, so a test can record the waits instead


class AsyncTransport:
    def __init__(self, opts: Options, http: httpx.AsyncClient | None) -> None:
        self.opts = opts
        self._own = http is None
        self.http = http if http is not None else httpx.AsyncClient()
        self._headers = _http.default_headers(opts)

    async def close(self) -> None:
        if self._own:
            await self.http.aclose()

    async def _send(self, call: Call, stream: bool) -> httpx.Response:
        """The 2xx answer, after the retries that are safe; a RendergateError otherwise."""
        request = self.http.build_request(**_http.request_of(self._headers, self.opts, call))
        lost = False
        in_use = 0
        attempt = 0
        while True:
            try:
                response = await self.http.send(request, stream=stream)
            except httpx.TransportError as e:
                if not _http.network_retryable(e, call) or attempt >= self.opts.max_retries:
                    raise _http.network_error(e, call) from e
                lost = lost or not isinstance(e, (httpx.ConnectError, httpx.ConnectTimeout))
                await _sleep(_http.backoff(attempt))
                attempt += 1
                continue
            if response.is_success:
                return response
            delay = _http.status_retry_delay(response, call, attempt, self.opts)
            await response.aread()
            await response.aclose()
            if delay is not None:
                await _sleep(delay)
                attempt += 1
                continue
            err = _http.answer_error(response, lost)
            if _http.in_use_retry(err, call, lost, in_use):
                await _sleep(_http.backoff(min(in_use, 3)))
                in_use += 1
                continue
            raise err

    async def json(self, call: Call) -> Any:
        response = await self._send(call, stream=False)
        return _http.decode_json(response, call)

    async def bytes(self, call: Call) -> bytes:
        return (await self._send(call, stream=False)).content

    @asynccontextmanager
    async def stream(self, call: Call) -> AsyncIterator[httpx.Response]:
        """The 2xx answer, its body not read yet; closed when the block ends."""
        response = await self._send(call, stream=True)
        try:
            yield response
        finally:
            await response.aclose()
