// Preloaded (node --import) into every process of a release's test run by record-release.ts: appends
// the text of each statement the release's own src/ sends through pg to $RENDERGATE_RECORD_SQL, one
// JSON string a line. Statements sent by test code are left out: only what the product runs matters.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const out = process.env.RENDERGATE_RECORD_SQL;
const root = process.env.RENDERGATE_RECORD_ROOT;
if (out && root) {
  const pg = createRequire(path.join(root, 'package.json'))('pg');
  const src = path.join(root, 'src') + path.sep;
  const seen = new Set();
  const record = (config) => {
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text !== 'string' || seen.has(text)) return;
    // The first frame outside pg says who sent the statement (pool.query hands it to a client later,
    // from pg-pool's own frames, so both entry points record).
    const caller = (new Error().stack ?? '')
      .split('\n')
      .slice(3)
      .find((l) => !l.includes('node_modules'));
    if (!caller?.includes(src)) return;
    seen.add(text);
    fs.appendFileSync(out, JSON.stringify(text) + '\n');
  };
  for (const proto of [pg.Client.prototype, pg.Pool.prototype]) {
    const original = proto.query;
    proto.query = function query(config, ...rest) {
      record(config);
      return original.call(this, config, ...rest);
    };
  }
}
