"""The async client's generations: create, read, list, follow to the end, cancel, delete, files."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import cast

import httpx

from . import _calls as calls
from . import _async_transport
from ._errors import APIConnectionError, RendergateError
from ._files import PathLike, part_path
from ._follow import (
    STREAM_FAILURES,
    Deadline,
    EventParser,
    Progress,
    Reporter,
    events_unavailable,
    is_final,
)
from ._http import network_error
from ._options import check_seconds
from ._async_resources import pages
from ._async_transport import AsyncTransport
from ._types import Deleted, Generation, GenerationStatus, InputValue


class AsyncGenerations:
    def __init__(self, t: AsyncTransport) -> None:
        self._t = t
        self._events: bool | None = None  # None: not known yet; False: the server has none

    async def create(
        self,
        model_id: str,
        inputs: Mapping[str, InputValue],
        idempotency_key: str | None = None,
        *,
        wait: int | None = None,
    ) -> Generation:
        """Starts a render: priced, charged and queued in one step. Every retry sends the same
        Idempotency-Key (one is made when none is given), so it is charged once. `wait`: seconds
        (1-60) the server may hold the answer until the render is final."""
        key = calls.new_idempotency_key() if idempotency_key is None else idempotency_key
        try:
            made = await self._t.json(calls.create_generation(model_id, inputs, key, wait))
            return cast(Generation, made)
        except RendergateError as e:
            e.idempotency_key = key
            raise

    async def get(self, generation_id: str, *, wait: int | None = None) -> Generation:
        """One generation; `wait` (1-60 s) holds the answer until it is final or the time is up."""
        return cast(Generation, await self._t.json(calls.get_generation(generation_id, wait)))

    def list(
        self,
        *,
        limit: int | None = None,
        status: GenerationStatus | None = None,
        model_id: str | None = None,
    ) -> AsyncIterator[Generation]:
        """Every generation of the account (of the key's mode), newest first, page after page;
        `limit` is the page size (1-100). Use `async for`."""
        return pages(self._t, lambda c: calls.list_generations(limit, status, model_id, c))

    async def wait(
        self,
        generation_id: str,
        *,
        timeout: float | None = None,
        on_progress: Progress | None = None,
    ) -> Generation:
        """The generation once it is final (succeeded, failed or refunded), never before; after
        `timeout` seconds, RunTimeoutError (the render goes on)."""
        deadline = Deadline(check_seconds("timeout", timeout, allow_none=True))
        return await self._follow(generation_id, deadline, Reporter(on_progress))

    async def _follow(
        self, generation_id: str, deadline: Deadline, report: Reporter
    ) -> Generation:
        """Live events while the server has them, else reads it holds until the render changes."""
        failures, last_id, interval = 0, None, 0.25
        while True:
            if deadline.left() <= 0:
                raise deadline.expired(generation_id, report.last)
            if self._events is not False and failures < STREAM_FAILURES:
                try:
                    final, last_id = await self._stream(generation_id, deadline, report, last_id)
                except RendergateError as e:
                    if e.status == 429:
                        failures = STREAM_FAILURES  # too many streams now: held reads this time
                    elif events_unavailable(e):
                        self._events = False
                    elif not isinstance(e, APIConnectionError):
                        raise
                    final = None
                if final is not None:
                    return final
                failures += 1
                continue
            started = time.monotonic()
            g = await self.get(generation_id, wait=deadline.hold(report.on_progress is not None))
            report(g)
            if is_final(g):
                return g
            # Answered at once (the server does not hold reads): wait a little before asking again.
            if time.monotonic() - started < 0.5:
                await _async_transport._sleep(max(0.0, min(interval, deadline.left())))
                interval = min(2.0, interval * 1.5)

    async def _stream(
        self, generation_id: str, deadline: Deadline, report: Reporter, last_id: str | None
    ) -> tuple[Generation | None, str | None]:
        parser = EventParser()
        parser.last_id = last_id
        read = deadline.read_timeout()
        try:
            async with self._t.stream(calls.events(generation_id, last_id, read)) as r:
                if not r.headers.get("content-type", "").startswith("text/event-stream"):
                    self._events = False
                    return None, last_id
                self._events = True
                async for line in r.aiter_lines():
                    g = parser.feed(line)
                    if g is not None:
                        report(g)
                        if is_final(g):
                            return g, parser.last_id
                    if deadline.left() <= 0:
                        break
        except httpx.TransportError:
            pass  # a broken stream: _follow resumes it after its last event, or reads instead
        return None, parser.last_id

    async def cancel(self, generation_id: str) -> Generation:
        """Cancels a queued render: it becomes refunded, its charge returned; the record stays."""
        return cast(Generation, await self._t.json(calls.cancel_generation(generation_id)))

    async def delete(self, generation_id: str) -> Deleted:
        """Deletes a generation and its file; a queued one is cancelled and refunded first."""
        try:
            return cast(Deleted, await self._t.json(calls.call("deleteGeneration", generation_id)))
        except RendergateError as e:
            # A repeat after a lost answer finds it gone: that is the outcome asked for.
            if e.code == "GENERATION_NOT_FOUND" and e.after_lost_answer:
                return {"id": generation_id, "deleted": True}
            raise

    async def content(self, generation_id: str) -> bytes:
        """The output file's bytes (see download() for large files)."""
        return await self._t.bytes(calls.content(generation_id))

    async def download(self, generation_id: str, path: PathLike) -> int:
        """Streams the output file to `path` (written beside it, then renamed); its size."""
        tmp, written = part_path(path), 0
        try:
            async with self._t.stream(calls.content(generation_id)) as r:
                with open(tmp, "wb") as f:
                    async for chunk in r.aiter_bytes():
                        f.write(chunk)
                        written += len(chunk)
            os.replace(tmp, path)
        except httpx.TransportError as e:
            tmp.unlink(missing_ok=True)
            raise network_error(e, calls.content(generation_id)) from e
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return written
