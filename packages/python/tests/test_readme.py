"""The README's Python runs as written: each ```python block, in order, in one namespace, with the
environment and the photo.png its quick start assumes, against the real server."""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

import rendergate
from _server import Account, Server, png

pytestmark = pytest.mark.usefixtures("retry_after_probe")

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_runs(
    server: Server,
    account: Callable[..., Account],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 3
    acct = account(0, mode="test")  # renders made at once, nothing charged
    monkeypatch.setenv("RENDERGATE_API_KEY", acct.key)
    monkeypatch.setenv("RENDERGATE_BASE_URL", server.url)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "photo.png").write_bytes(png())
    namespace: dict[str, object] = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "[test]" in out  # a test key's text output
    assert "bytes in clip.mp4" in out and (tmp_path / "clip.mp4").stat().st_size > 0
    assert "'spentCents'" in out


def test_the_version_is_the_packages() -> None:
    try:
        installed = metadata.version("rendergate")
    except metadata.PackageNotFoundError:
        pytest.skip("run from the sources, not installed")
    assert rendergate.__version__ == installed
    requires = metadata.requires("rendergate") or []
    assert [re.split(r"[ <>=!~;(]", r, maxsplit=1)[0] for r in requires] == ["httpx"]
