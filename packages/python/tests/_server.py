"""The real Rendergate server, started for the tests as an operator starts it (`node src/main.ts
serve`, an embedded PostgreSQL under a temporary data dir), and what the tests need around it: an
account with credit and a key made through the admin API, a PNG, and a webhook receiver."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[3]
ADMIN_TOKEN = "python-tests-admin-token-0123456789"


def _die_with_parent() -> None:
    """In the server's process, before node starts: SIGTERM when the tests' process ends, however it
    ends (killed by a CI timeout too), so no server or database outlives the run (Linux only)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    url: str
    admin_token: str
    proc: subprocess.Popen[bytes] | None = None
    data_dir: Path | None = None
    log: Path | None = None

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = httpx.request(
            method,
            f"{self.url}/admin/v1{path}",
            json=body,
            headers={"authorization": f"Bearer {self.admin_token}"},
            timeout=30,
        )
        if r.status_code >= 300:
            raise AssertionError(f"admin {method} {path}: {r.status_code} {r.text}")
        return r.json()

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def start_server() -> Server:
    """A server of its own on a free port, or the one RENDERGATE_TEST_URL names (with
    RENDERGATE_TEST_ADMIN_TOKEN), to iterate quickly on the tests."""
    given = os.environ.get("RENDERGATE_TEST_URL")
    if given:
        return Server(
            given.rstrip("/"), os.environ.get("RENDERGATE_TEST_ADMIN_TOKEN", ADMIN_TOKEN)
        )
    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="rg-python-"))
    data_dir.chmod(0o755)  # as root, the embedded PostgreSQL runs as `postgres` and must enter it
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "RENDERGATE_DATA_DIR": str(data_dir),
        "RENDERGATE_ADMIN_TOKEN": ADMIN_TOKEN,
        "RENDERGATE_PUBLIC_URL": url,
        "RENDERGATE_ALLOW_PRIVATE_URLS": "1",  # webhooks to this test's receiver on loopback
        "RENDERGATE_WEBHOOK_RETRY_SECONDS": "1,1,1",
        "LOG_LEVEL": "warn",
    }
    env.pop("DATABASE_URL", None)
    log = data_dir / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["node", "--import", "tsx", "src/main.ts", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    server = Server(url, ADMIN_TOKEN, proc, data_dir, log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = server.log_tail()
            server.stop()
            raise RuntimeError(f"the server exited ({proc.returncode}):\n{tail}")
        try:
            if httpx.get(f"{url}/v1/openapi.json", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    tail = server.log_tail()
    server.stop()
    raise RuntimeError(f"the server did not answer within 120 s:\n{tail}")


@dataclass
class Account:
    id: str
    email: str
    key: str
    key_id: str


def new_account(server: Server, cents: int, **key: Any) -> Account:
    """An account with `cents` of credit and one key (its options as the admin API takes them)."""
    email = f"py-{uuid.uuid4().hex[:12]}@example.test"
    account = server.admin("POST", "/accounts", {"email": email})
    if cents > 0:
        server.admin("POST", f"/accounts/{account['id']}/credits", {"amountCents": cents})
    made = server.admin("POST", f"/accounts/{account['id']}/keys", key)
    return Account(account["id"], email, made["key"], made["id"])


def png(width: int = 64, height: int = 48) -> bytes:
    """A real PNG (RGB, a gradient), made with zlib as the format says."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in ((x * 4) % 256, (y * 5) % 256, 128))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes

    def event(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """An HTTP endpoint on loopback that answers 200 to every POST and keeps what it got."""

    deliveries: list[Delivery] = field(default_factory=list)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.deliveries.append(Delivery(dict(self.headers.items()), body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def wait_for(self, count: int, timeout: float = 30) -> list[Delivery]:
        deadline = time.monotonic() + timeout
        while len(self.deliveries) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.deliveries)} deliveries after {timeout} s")
            time.sleep(0.05)
        return self.deliveries
