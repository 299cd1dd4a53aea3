// A TCP proxy in front of the service that loses answers: for the next `n` requests it forwards the
// request, waits until the server starts answering (so the server has done the work and committed),
// then closes the client's socket without relaying a byte. What a client sees when a load balancer or
// the network drops a connection at the worst moment. Afterwards it relays both ways.
import net from 'node:net';

export async function dropProxy(target: { host: string; port: number }) {
  let toDrop = 0;
  let dropped = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    // Decided when a request starts arriving, so a kept-alive connection's next request counts too.
    let drop = false;
    client.on('data', (d) => {
      if (!drop && toDrop > 0) {
        drop = true;
        toDrop--;
      }
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (drop) {
        dropped++;
        client.destroy();
        upstream.destroy();
      } else {
        client.write(d);
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    /** Lose the answers of the next n requests (each closes its connection). */
    dropNext(n: number) {
      toDrop = n;
    },
    get dropped() {
      return dropped;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
