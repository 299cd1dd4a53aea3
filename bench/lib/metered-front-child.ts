// The floor of a metered chat front on this machine (forked by metered-front.ts): the least any front
// can do that charges durably before it calls the backend and records the outcome durably before it
// answers, as the contract's chat fronts must ("answered when the generation is final"). Bare
// node:http, no framework, no key, no limits: one statement (a guarded balance and a render row,
// committed) before the backend's stream, read to its end as the `openai` driver reads it, and one
// statement (the outcome, committed) after it, each with `synchronous_commit` on. What our fronts
// add over the backend, less what this adds, is what Rendergate itself costs.
import http from 'node:http';
import pg from 'pg';

const [url, backend, apiKey] = [
  process.env.FLOOR_DB!,
  process.env.FLOOR_BACKEND!,
  process.env.FLOOR_KEY!,
];
const pool = new pg.Pool({ connectionString: url, max: 4 });
await pool.query(`CREATE TABLE IF NOT EXISTS floor_accounts (id int PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
  CREATE TABLE IF NOT EXISTS floor_renders (id text PRIMARY KEY, status text NOT NULL, text_output text);
  INSERT INTO floor_accounts VALUES (1, 1000000000) ON CONFLICT DO NOTHING`);
let n = 0;

async function front(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  let body = '';
  for await (const c of req) body += String(c);
  const { messages } = JSON.parse(body) as { messages: unknown };
  const id = `r${process.pid}_${n++}`;
  const charged = await pool.query({
    name: 'charge',
    text: `WITH a AS (UPDATE floor_accounts SET balance = balance - 1 WHERE id = 1 AND balance >= 1 RETURNING 1)
           INSERT INTO floor_renders (id, status) SELECT $1, 'running' FROM a`,
    values: [id],
  });
  if (charged.rowCount !== 1) return void res.writeHead(402).end();
  const r = await fetch(`${backend}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model: 'm', stream: true, messages }),
  });
  let text = '';
  for (const line of (await r.text()).split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    text +=
      (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0].delta
        .content ?? '';
  }
  await pool.query({
    name: 'outcome',
    text: `UPDATE floor_renders SET status = 'succeeded', text_output = $2 WHERE id = $1`,
    values: [id, text],
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ id, choices: [{ index: 0, message: { role: 'assistant', content: text } }] }),
  );
}

const server = http.createServer((req, res) => {
  front(req, res).catch((err: unknown) => {
    console.error(err);
    res.writeHead(500).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as { port: number }).port });
});
process.on('disconnect', () => void pool.end().finally(() => process.exit(0)));
