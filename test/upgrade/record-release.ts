// Records what a release sends to PostgreSQL, for the rolling-upgrade test (rolling.test.ts):
//   node --import tsx test/upgrade/record-release.ts <commit> [test files...]
// runs that commit's own tests (a copy of its tree, this checkout's node_modules) with every process
// recording the statements its src/ sends, and writes test/fixtures/previous-release.json: the
// statements, and the migrations that release had with their checksums. Run it at each release, with
// the release's commit, so that the next one is checked against it (docs/upgrades.md).
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEFAULT_TESTS = [
  'test/integration/api',
  'test/integration/queue',
  'test/integration/faults',
  'test/e2e/shutdown.test.ts',
];

const [commit, ...tests] = process.argv.slice(2);
if (!commit) throw new Error('usage: record-release.ts <commit> [test files...]');
const sha = execFileSync('git', ['rev-parse', commit], { cwd: ROOT }).toString().trim();
const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-release-'));
fs.chmodSync(tree, 0o755);
const sqlFile = path.join(tree, 'statements.ndjson');
try {
  execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${tree}"`], { cwd: ROOT });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  const run = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      ...(tests.length ? tests : DEFAULT_TESTS),
    ],
    {
      cwd: tree,
      stdio: 'inherit',
      env: {
        ...process.env,
        NODE_OPTIONS:
          `${process.env.NODE_OPTIONS ?? ''} --import ${path.join(ROOT, 'test/upgrade/statement-recorder.mjs')}`.trim(),
        RENDERGATE_RECORD_SQL: sqlFile,
        RENDERGATE_RECORD_ROOT: tree,
      },
    },
  );
  if (run.status !== 0)
    process.stderr.write(
      `the release's tests did not all pass (exit ${run.status}); recording what ran\n`,
    );
  const statements = [
    ...new Set(
      fs
        .readFileSync(sqlFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as string),
    ),
  ]
    .filter((s) => /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(s))
    .sort();
  const migrationsDir = path.join(tree, 'migrations');
  const migrations = fs
    .readdirSync(migrationsDir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({
      name,
      sha256: crypto
        .createHash('sha256')
        .update(fs.readFileSync(path.join(migrationsDir, name)))
        .digest('hex'),
    }));
  const version = JSON.parse(fs.readFileSync(path.join(tree, 'package.json'), 'utf8'))
    .version as string;
  const fixture = { release: { commit: sha, version }, migrations, statements };
  fs.writeFileSync(
    path.join(ROOT, 'test/fixtures/previous-release.json'),
    JSON.stringify(fixture, null, 2) + '\n',
  );
  process.stdout.write(
    `recorded ${statements.length} statements and ${migrations.length} migrations of ${sha.slice(0, 7)}\n`,
  );
} finally {
  fs.rmSync(tree, { recursive: true, force: true });
}
