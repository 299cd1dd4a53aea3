// A loopback TCP proxy that the test can make hold all traffic (both directions, every connection, new
// ones included) and later release, delivering what it held in order: a process cut off from its
// database mid-render, deterministically, without stopping the database for everyone else.
import net from 'node:net';

export interface HoldingProxy {
  port: number;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function holdingProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<HoldingProxy> {
  let held = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(targetPort, targetHost);
    sockets.add(down).add(up);
    const pending: Array<[net.Socket, Buffer]> = [];
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (held) pending.push([to, chunk]);
      else to.write(chunk);
    };
    down.on('data', forward(up));
    up.on('data', forward(down));
    const flush = () => {
      for (const [to, chunk] of pending.splice(0)) to.write(chunk);
    };
    flushes.add(flush);
    const end = () => {
      flushes.delete(flush);
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const f of flushes) f();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
