// Lints the OpenAPI document (as the server builds it on the default catalog) with two third-party
// linters' recommended rules: Redocly's `recommended` and Spectral's `spectral:oas`. Fails on any error
// (warnings are printed, not fatal). `npm run lint:openapi`; test/unit/http/openapi-lint.test.ts runs it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadCatalog } from '../src/backends/catalog.ts';
import { buildOpenApiDocument } from '../src/http/openapi/document.ts';

const run = promisify(execFile);
const bin = (name: string) =>
  fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));

export interface LintResult {
  tool: string;
  ok: boolean;
  output: string;
}

async function tool(name: string, args: string[], cwd: string): Promise<LintResult> {
  try {
    const { stdout, stderr } = await run(bin(name), args, {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 120_000,
    });
    return { tool: name, ok: true, output: stdout + stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    return {
      tool: name,
      ok: false,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}` || err.message,
    };
  }
}

export async function lintOpenApi(): Promise<LintResult[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-openapi-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(
      file,
      JSON.stringify(buildOpenApiDocument(loadCatalog(), 'https://api.rendergate.test')),
    );
    fs.writeFileSync(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
    return await Promise.all([
      tool('redocly', ['lint', file, '--extends', 'recommended', '--format', 'stylish'], dir),
      // Spectral exits non-zero only for errors (its default --fail-severity).
      tool('spectral', ['lint', '-r', path.join(dir, '.spectral.yaml'), file], dir),
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await lintOpenApi();
  for (const r of results)
    process.stdout.write(`── ${r.tool}: ${r.ok ? 'no errors' : 'ERRORS'}\n${r.output}\n`);
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}
