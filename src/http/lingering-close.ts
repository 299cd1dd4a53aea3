// The close of a connection whose request was answered before its body arrived (401, 413, 429…), when
// that body is large or of unknown length; a small one is read and dropped instead (drainsRest below).
//
// Destroying the socket at once loses the answer: the client is still sending, and closing a socket
// with its bytes unread sends a reset, which makes the client's TCP stack drop the answer it has not
// read yet (fetch reports ECONNRESET instead of the 401). Leaving the socket to Node is no better for a
// large body: it would read the rest at any pace, with no limit. So the socket stops reading (the rest of
// the body waits in the kernel's buffers, costing nothing), our side ends after the answer (FIN), and
// the socket is destroyed LINGER_MS later at most (sooner at the request's own deadline): time for
// the client to read the answer and stop. At most MAX_LINGERING sockets linger at once in a process;
// past that, a socket is destroyed at once, as before, so a flood of early answers holds no more.
import type { Socket } from 'node:net';

export const LINGER_MS = 2_000;
export const MAX_LINGERING = 1_000;
let lingering = 0;
const closing = new WeakSet<Socket>();

export function lingeringClose(socket: Socket | null, untilMs: number): void {
  if (!socket || socket.destroyed || closing.has(socket)) return;
  closing.add(socket);
  const ms = Math.min(LINGER_MS, untilMs - performance.now());
  if (ms <= 0 || lingering >= MAX_LINGERING) {
    socket.destroy();
    return;
  }
  lingering++;
  socket.pause();
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  socket.once('close', () => {
    lingering--;
    clearTimeout(timer);
  });
  socket.end();
}

/**
 * For an answer that says `Connection: close`. Node ends such a connection with socket.destroySoon()
 * once the answer is written, which destroys it with the client's bytes unread (the reset above); this
 * socket lingers instead.
 */
export function lingerOnClose(socket: Socket, untilMs: number): void {
  socket.destroySoon = () => lingeringClose(socket, untilMs);
}

/**
 * The most of a declared body read and dropped after an answer given before it (an upload refused
 * by its quota, a wrong key): the connection then stays open for the client's next request. Reading
 * the rest of a small body costs both sides less than the new connection a close makes the client
 * open: for a 120 KB upload refused from two loops over loopback, a bare node:http server spent
 * 118 µs of CPU a request reading it, and 226 µs answering with `Connection: close`. Past this
 * size, or a body of unknown length (chunked), the connection closes as above.
 */
export const DRAIN_MAX_BYTES = 1024 * 1024;

/**
 * Whether the rest of a request's body, left unread by an answer given before it, is read and
 * dropped (Node does so once the answer is written, within the request's deadline: server.ts) rather
 * than the connection closed.
 */
export function drainsRest(headers: { 'content-length'?: string; 'transfer-encoding'?: string }) {
  if (headers['transfer-encoding'] !== undefined) return false;
  const n = Number(headers['content-length']);
  return Number.isSafeInteger(n) && n >= 0 && n <= DRAIN_MAX_BYTES;
}
