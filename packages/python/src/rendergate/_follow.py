"""Following a render to its end, shared by the sync and async clients: the live events' parser,
how long to ask the server to hold a read, and what a final state means for run().
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from ._errors import GenerationFailedError, RendergateError, RunTimeoutError
from ._types import Generation

FINAL = frozenset({"succeeded", "failed", "refunded"})
HOLD = 25
"""Seconds a read may be held when only the final state matters."""
PROGRESS_HOLD = 2
"""With on_progress: a held read wakes only at the end, so hold briefly to see progress."""
STREAM_READ_TIMEOUT = 40.0
"""The server sends a comment every 15 s: a stream silent for longer than this is dead."""
STREAM_FAILURES = 3
"""Broken streams in a row before following falls back to held reads."""

Progress = Callable[[Generation], None]


def is_final(g: Generation) -> bool:
    return g["status"] in FINAL


def outcome(g: Generation) -> Generation:
    """The generation when it succeeded; a GenerationFailedError carrying it when not."""
    if g["status"] == "succeeded":
        return g
    err = g.get("error")
    why = f": {err['code']}: {err['message']}" if err else "."
    code = "GENERATION_FAILED" if g["status"] == "failed" else "GENERATION_REFUNDED"
    raise GenerationFailedError(
        f"Generation {g['id']} {g['status']}{why} Its charge was returned.",
        code=code,
        generation=g,
    )


def events_unavailable(err: RendergateError) -> bool:
    """The server has no live events (an older one), or will not stream them now."""
    return (err.status == 404 and err.code == "NOT_FOUND") or err.status in (405, 406, 501)


@dataclass
class Deadline:
    """When a wait ends (None: never), and the pieces of it each step may use."""

    timeout: float | None
    end: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.end = None if self.timeout is None else time.monotonic() + self.timeout

    def left(self) -> float:
        return math.inf if self.end is None else self.end - time.monotonic()

    def hold(self, reporting: bool) -> int | None:
        """Seconds to ask the server to hold the next read (1-60) within what is left; None
        when less than a second is left (the read is answered at once)."""
        cap = PROGRESS_HOLD if reporting else HOLD
        left = self.left()
        if left < 1:
            return None
        return min(cap, int(left) if math.isfinite(left) else cap)

    def read_timeout(self) -> float:
        """The longest a stream may stay silent: the server's keep-alive, or what is left."""
        return max(0.1, min(STREAM_READ_TIMEOUT, self.left()))

    def expired(self, generation_id: str, last: Generation | None) -> RunTimeoutError:
        state = f" (still {last['status']})" if last else ""
        return RunTimeoutError(
            f"Generation {generation_id} was not final after {self.timeout:g} s{state}. It was "
            f"created once and keeps running: resume with generations.wait({generation_id!r}) "
            "or cancel it with generations.cancel(...).",
            generation_id=generation_id,
            generation=last,
        )


class Reporter:
    """Calls on_progress with each state that differs from the last one reported."""

    def __init__(self, on_progress: Progress | None) -> None:
        self.on_progress = on_progress
        self.last: Generation | None = None
        self._seen: tuple[object, ...] | None = None

    def __call__(self, g: Generation) -> None:
        self.last = g
        key = (g["status"], g.get("progress"), g.get("queuePosition"), g.get("startedAt"))
        if self.on_progress is not None and key != self._seen:
            self._seen = key
            self.on_progress(g)


class EventParser:
    """Server-sent events (WHATWG HTML, "Server-sent events"), fed one line at a time; yields the
    generations of `generation` events and keeps the last event id for a resumed stream."""

    def __init__(self) -> None:
        self.last_id: str | None = None
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> Generation | None:
        line = line.rstrip("\r\n")
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self.last_id = value
        return None

    def _dispatch(self) -> Generation | None:
        event, data = self._event or "message", "\n".join(self._data)
        self._event, self._data = "", []
        if event != "generation" or not data:
            return None
        parsed = json.loads(data)
        if not isinstance(parsed, dict) or "status" not in parsed:
            return None
        return cast(Generation, parsed)
