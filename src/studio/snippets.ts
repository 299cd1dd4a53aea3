// "Use from the API": the render as a curl command and as JavaScript, with the key as a placeholder (the
// studio never has a key to show). Plain text, escaped by the template like everything else.
export function apiSnippets(publicUrl: string, modelId: string, inputs: Record<string, unknown>) {
  const body = JSON.stringify({ modelId, inputs }, null, 2);
  const curl = `curl -X POST ${publicUrl}/v1/generations \\
  -H "Authorization: Bearer $RENDERGATE_API_KEY" \\
  -H "Content-Type: application/json" \\
  -H "Idempotency-Key: $(uuidgen)" \\
  -d '${body.replace(/'/g, `'\\''`)}'`;
  const js = `const res = await fetch('${publicUrl}/v1/generations', {
  method: 'POST',
  headers: {
    Authorization: \`Bearer \${process.env.RENDERGATE_API_KEY}\`,
    'Content-Type': 'application/json',
    'Idempotency-Key': crypto.randomUUID(),
  },
  body: JSON.stringify(${body.replace(/\n/g, '\n  ')}),
});
const generation = await res.json(); // then poll GET /v1/generations/{id} until it is final`;
  return { curl, js };
}
