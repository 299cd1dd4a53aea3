// The process's logger. Lines are written off the request path: to a pipe or file through pino's
// asynchronous destination (a buffer flushed by the event loop's own writes), to a terminal through a
// pino-pretty transport (a worker thread). Synchronous writes of one access line per request cost an
// authenticated poll about a fifth of its throughput at the default level.
//
// Asynchronous means a line can sit in memory for a moment, so every way out of the process flushes
// first: the graceful shutdown, the forced one, and a fatal error.
import os from 'node:os';
import pino, { type Logger } from 'pino';
import { AccessBatch, accessWriter, type AccessWriter } from '../http/access-log.ts';

/** The most one asynchronous write of the log hands the kernel. */
const WRITE_BYTES = 64 * 1024;
const FLUSH_EVERY_MS = 200;
/** The longest an exit waits for its lines to be written before it goes anyway. */
const EXIT_FLUSH_MS = 5_000;

export interface ProcessLog {
  log: Logger;
  /** Writes out every buffered line, then exits with `code` (at most EXIT_FLUSH_MS later). */
  exit(code: number): void;
  /** Writes out every buffered line. */
  flush(): Promise<void>;
  /** Access lines written straight to the destination (null: a pretty terminal, through pino). */
  access: AccessWriter | null;
}

export function createProcessLog(
  level: string,
  opts: { pretty?: boolean; fd?: number } = {},
): ProcessLog {
  const fd = opts.fd ?? 1;
  const pretty = opts.pretty ?? (fd === 1 ? process.stdout.isTTY === true : false);
  let log: Logger;
  let flushSync: () => void;
  let access: AccessWriter | null = null;
  let flushBatch = () => {};
  if (pretty) {
    const transport = pino.transport({
      // pino-pretty with one line per request (pretty-log.mjs)
      target: new URL('./pretty-log.mjs', import.meta.url).href,
      options: { destination: fd, colorize: true, translateTime: 'SYS:HH:MM:ss.l' },
    });
    log = pino({ level }, transport);
    // A transport's worker thread drains its buffer on `flushSync` (it blocks until the worker caught up).
    flushSync = () => (transport as unknown as { flushSync(): void }).flushSync();
  } else {
    // Lines are gathered into writes of up to 64 KiB (sonic-boom's `maxWrite`; 16 KiB by default): one
    // write per line, even asynchronous, cost a poll a third more CPU than no logging, and every
    // asynchronous write wakes a thread of libuv's pool and then the event loop. In a CPU profile of
    // polls at info, the main thread's time in fs.write fell from 390 to 240 ms over 6 s when the writes
    // went from 4 to 15 KiB. A line of a quiet moment waits at most FLUSH_EVERY_MS for its write, so
    // `tail -f` still shows each request at once to a person.
    // Access lines reach it already gathered into chunks of that size (AccessBatch), so that a line
    // costs one string concatenation and the destination measures and converts once per chunk.
    const dest = pino.destination({
      dest: fd,
      sync: false,
      minLength: AccessBatch.CHUNK_CHARS,
      maxWrite: WRITE_BYTES,
      // Every write is bytes (AccessBatch): no UTF-8 measuring of each chunk.
      contentMode: 'buffer',
    });
    // In `buffer` mode sonic-boom takes Buffers (its type names only strings).
    const batch = new AccessBatch(dest as unknown as { write(chunk: Buffer): unknown });
    setInterval(() => {
      try {
        batch.flush();
        dest.flush();
      } catch {
        /* closed at exit */
      }
    }, FLUSH_EVERY_MS).unref();
    const base = { pid: process.pid, hostname: os.hostname() };
    // The logger's own lines carry the access lines gathered before them, so the output stays in order.
    log = pino({ level, base, hooks: { streamWrite: batch.before } }, dest);
    access = accessWriter(log, batch, base);
    flushBatch = () => batch.flush();
    flushSync = () => {
      try {
        batch.flush();
        dest.flushSync();
      } catch {
        /* nothing buffered yet, or the reader is gone */
      }
    };
    // A process.exit() that bypasses `exit` below: pino's destination flushes itself at the exit, but the
    // access lines gathered since the last chunk are not in it yet.
    process.once('exit', flushSync);
  }
  const flush = () =>
    new Promise<void>((resolve) => {
      try {
        flushBatch();
        log.flush(() => resolve());
      } catch {
        resolve();
      }
    });
  let exiting = false;
  return {
    log,
    flush,
    access,
    // Not flushSync alone: it skips the chunk of an asynchronous write still under way (a pipe whose
    // reader is behind), and exiting then loses those lines. The asynchronous flush waits for that write
    // too; flushSync after it only covers a reader that stopped reading altogether.
    exit(code: number): void {
      if (exiting) return;
      exiting = true;
      const end = () => {
        flushSync();
        process.exit(code);
      };
      setTimeout(end, EXIT_FLUSH_MS);
      void flush().then(end);
    },
  };
}

/** A crash is logged and flushed before the process ends, instead of dying with lines in the buffer. */
export function exitOnFatal(logging: ProcessLog): void {
  process.on('uncaughtException', (err) => {
    logging.log.fatal({ err }, 'uncaught exception; exiting');
    logging.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    logging.log.fatal({ err }, 'unhandled promise rejection; exiting');
    logging.exit(1);
  });
}
