"""Requests of the sync client, with the retries of _http.py (time.sleep between tries)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from . import _http
from ._http import Call
from ._options import Options

_sleep = time.sleep  # looked up at each wait, so a test can record the waits instead


class SyncTransport:
    def __init__(self, opts: Options, http: httpx.Client | None) -> None:
        self.opts = opts
        self._own = http is None
        self.http = http if http is not None else httpx.Client()
        self._headers = _http.default_headers(opts)

    def close(self) -> None:
        if self._own:
            self.http.close()

    def _send(self, call: Call, stream: bool) -> httpx.Response:
        """The 2xx answer, after the retries that are safe; a RendergateError otherwise."""
        request = self.http.build_request(**_http.request_of(self._headers, self.opts, call))
        lost = False
        in_use = 0
        attempt = 0
        while True:
            try:
                response = self.http.send(request, stream=stream)
            except httpx.TransportError as e:
                if not _http.network_retryable(e, call) or attempt >= self.opts.max_retries:
                    raise _http.network_error(e, call) from e
                lost = lost or not isinstance(e, (httpx.ConnectError, httpx.ConnectTimeout))
                _sleep(_http.backoff(attempt))
                attempt += 1
                continue
            if response.is_success:
                return response
            delay = _http.status_retry_delay(response, call, attempt, self.opts)
            response.read()
            response.close()
            if delay is not None:
                _sleep(delay)
                attempt += 1
                continue
            err = _http.answer_error(response, lost)
            if _http.in_use_retry(err, call, lost, in_use):
                _sleep(_http.backoff(min(in_use, 3)))
                in_use += 1
                continue
            raise err

    def json(self, call: Call) -> Any:
        response = self._send(call, stream=False)
        return _http.decode_json(response, call)

    def bytes(self, call: Call) -> bytes:
        return self._send(call, stream=False).content

    @contextmanager
    def stream(self, call: Call) -> Iterator[httpx.Response]:
        """The 2xx answer, its body not read yet; closed when the block ends."""
        response = self._send(call, stream=True)
        try:
            yield response
        finally:
            response.close()
