"""A TCP proxy in front of the real server that loses answers: for the first `drops` connections
whose request starts with `prefix`, it forwards the request, waits until the server starts to
answer (so the server has done the work), then closes the client's connection without the answer.
The network fault that retries and idempotency keys exist for. Anything else is piped as is."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit


class LosingProxy:
    def __init__(self, target_url: str, prefix: bytes, drops: int) -> None:
        parts = urlsplit(target_url)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.prefix = prefix
        self.drops = drops
        self.dropped = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _take_drop(self, first: bytes) -> bool:
        with self._lock:
            if first.startswith(self.prefix) and self.drops > 0:
                self.drops -= 1
                return True
            return False

    def _handle(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.target)
        try:
            first = client.recv(65536)
            if not first:
                return
            upstream.sendall(first)
            threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
            if self._take_drop(first):
                upstream.recv(1)  # the server answers: it did the work; the client never hears
                with self._lock:
                    self.dropped += 1
                return
            _pipe(upstream, client)
        except OSError:
            pass
        finally:
            # shutdown first: it wakes the pipe thread's recv; close alone would leave the
            # connection open (no FIN) for as long as that recv blocks
            for s in (client, upstream):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
