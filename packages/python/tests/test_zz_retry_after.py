"""Last: the request conftest's probe sent past a key's rate limit at the start of the run was
answered 429, waited the server's Retry-After for real, was sent again, and succeeded."""

from __future__ import annotations

from conftest import Probe


def test_a_429_is_sent_again_after_retry_after_and_succeeds(retry_after_probe: Probe) -> None:
    assert retry_after_probe.done.wait(timeout=90), "the probe did not end within 90 s"
    if retry_after_probe.error is not None:
        raise retry_after_probe.error
    assert retry_after_probe.result is not None and "accountId" in retry_after_probe.result
    statuses = [s for s, _ in retry_after_probe.answers]
    assert statuses[-1] == 200
    if statuses[0] == 429:  # (the minute may have turned just before: then nothing was refused)
        retry_after = float(retry_after_probe.answers[0][1] or "nan")
        assert 1 <= retry_after <= 60
        assert retry_after - 0.5 <= retry_after_probe.waited <= retry_after + 10
