// `npm run build`: compiles src/ to dist/ (tsc), then copies what is not TypeScript beside it: the
// studio's views and assets and the text model's worker entry. dist/ then runs on plain Node
// (`node dist/main.js`), reading migrations/, catalog/ and package.json from the directory above it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

fs.rmSync(DIST, { recursive: true, force: true });
const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

let copied = 0;
for (const entry of fs.readdirSync(SRC, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(DIST, path.relative(SRC, from));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
  copied++;
}
process.stdout.write(
  `built ${path.relative(ROOT, DIST)}/ (${copied} files copied beside the JavaScript)\n`,
);
