// fetch() from a chosen source address on loopback (127.0.0.2, 127.0.0.3, …): the service sees each as
// another client address (req.ip). Node's fetch cannot bind its socket, so this speaks HTTP/1.1 through
// node:http with `localAddress` and hands back a standard Response.
import http from 'node:http';

export async function fetchFrom(
  localAddress: string,
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | URLSearchParams | Uint8Array;
  } = {},
): Promise<Response> {
  const body = init.body instanceof URLSearchParams ? init.body.toString() : init.body;
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, localAddress, agent: false },
      resolve,
    );
    req.on('error', reject);
    req.end(body);
  });
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2)
    headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
  const status = res.statusCode ?? 500;
  return new Response([204, 304].includes(status) ? null : Buffer.concat(chunks), {
    status,
    headers,
  });
}
