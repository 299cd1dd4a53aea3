"""The live events' parser on the stream the contract describes (docs/api.md "Live events of a
render"): `event: generation`, `id: <n>`, `data: <Generation JSON>`, comment lines to keep the
connection open; fed line by line as httpx splits them."""

from __future__ import annotations

import json

from rendergate._follow import EventParser, Reporter, is_final
from rendergate._types import Generation


def gen(status: str, progress: float | None = None) -> Generation:
    g: Generation = {
        "id": "gen_1",
        "modelId": "rendergate/shot-list",
        "inputs": {"text": "x"},
        "status": status,  # type: ignore[typeddict-item]
        "costCents": 1,
        "refundedCents": 0,
        "progress": progress,
        "queuePosition": None,
        "expiresAt": None,
        "createdAt": "2026-11-21T10:00:00.000Z",
        "startedAt": None,
        "completedAt": None,
    }
    return g


def feed(parser: EventParser, text: str) -> list[Generation]:
    out = []
    for line in text.splitlines():
        g = parser.feed(line)
        if g is not None:
            out.append(g)
    return out


def test_generation_events_ids_and_comments() -> None:
    p = EventParser()
    stream = (
        f"event: generation\nid: 1\ndata: {json.dumps(gen('queued'))}\n\n"
        ": keep-alive\n\n"
        f"event: generation\r\nid: 2\r\ndata: {json.dumps(gen('queued', 0.5))}\r\n\r\n"
        f"event: generation\nid:3\ndata:{json.dumps(gen('succeeded', 1))}\n\n"
    )
    got = feed(p, stream)
    assert [(g["status"], g["progress"]) for g in got] == [
        ("queued", None),
        ("queued", 0.5),
        ("succeeded", 1),
    ]
    assert p.last_id == "3" and is_final(got[-1])


def test_data_over_several_lines_and_other_events() -> None:
    p = EventParser()
    body = json.dumps(gen("failed"), indent=1).splitlines()
    stream = "event: ping\ndata: {}\n\n" + "event: generation\n"
    stream += "".join(f"data: {line}\n" for line in body) + "\n"
    assert [g["status"] for g in feed(p, stream)] == ["failed"]
    assert feed(p, "data: no event name is a message\n\n") == []


def test_the_reporter_reports_changes_only() -> None:
    seen: list[Generation] = []
    report = Reporter(seen.append)
    for g in [
        gen("queued"),
        gen("queued"),
        gen("queued", 0.2),
        gen("queued", 0.2),
        gen("succeeded"),
    ]:
        report(g)
    assert [(g["status"], g["progress"]) for g in seen] == [
        ("queued", None),
        ("queued", 0.2),
        ("succeeded", None),
    ]
    assert report.last == gen("succeeded")
