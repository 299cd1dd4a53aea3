// "Use from the API": the render as curl, as JavaScript with our client (@rendergate/client) and as
// Python with `requests`, each a whole program that runs as shown with the key in RENDERGATE_API_KEY
// (the studio never has a key to show). Plain text, escaped by the template like everything else.

/** A JSON value as a Python literal (True, False, None; strings in JSON's escapes, which Python reads). */
function py(v: unknown, indent = ''): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number' || typeof v === 'string') return JSON.stringify(v);
  const inner = `${indent}    `;
  if (Array.isArray(v)) return `[${v.map((x) => py(x, indent)).join(', ')}]`;
  const entries = Object.entries(v as Record<string, unknown>).map(
    ([k, x]) => `${inner}${JSON.stringify(k)}: ${py(x, inner)},`,
  );
  return entries.length === 0 ? '{}' : `{\n${entries.join('\n')}\n${indent}}`;
}

/** A JSON value as a JavaScript literal, indented for the snippet. */
const js = (v: unknown, indent: string) => JSON.stringify(v, null, 2).replace(/\n/g, `\n${indent}`);

export function apiSnippets(publicUrl: string, modelId: string, inputs: Record<string, unknown>) {
  const body = JSON.stringify({ modelId, inputs }, null, 2);
  const curl = `curl -X POST ${publicUrl}/v1/generations \\
  -H "Authorization: Bearer $RENDERGATE_API_KEY" \\
  -H "Content-Type: application/json" \\
  -H "Idempotency-Key: $(uuidgen)" \\
  -d '${body.replace(/'/g, `'\\''`)}'`;
  const javascript = `// @rendergate/client is not on npm: npm pack in packages/client of Rendergate,
// then npm install ./rendergate-client-0.1.0.tgz. The key is read from RENDERGATE_API_KEY
import { Rendergate } from '@rendergate/client';

const rg = new Rendergate({ baseUrl: '${publicUrl}' });
const generation = await rg.run('${modelId}', ${js(inputs, '')});
console.log(generation.status, generation.textOutput ?? generation.contentUrl);`;
  const python = `# pip install requests; the key is read from RENDERGATE_API_KEY
import os, time, uuid
import requests

BASE = "${publicUrl}"
auth = {"Authorization": f"Bearer {os.environ['RENDERGATE_API_KEY']}"}
r = requests.post(f"{BASE}/v1/generations", headers={**auth, "Idempotency-Key": str(uuid.uuid4())}, json={
    "modelId": ${JSON.stringify(modelId)},
    "inputs": ${py(inputs, '    ')},
})
r.raise_for_status()
generation = r.json()
while generation["status"] == "queued":
    time.sleep(1)
    generation = requests.get(f"{BASE}/v1/generations/{generation['id']}", headers=auth).json()
print(generation["status"], generation.get("textOutput") or generation.get("contentUrl"))`;
  return { curl, javascript, python };
}
