// A janitor as a worker runs one (src/queue/janitor.ts), for tests that sweep by hand: on `db` and
// `storage`, refunding through the ledger, logging nothing unless given a log.
import pino, { type Logger } from 'pino';
import type { Db } from '../../src/db/pool.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { Janitor } from '../../src/queue/janitor.ts';
import type { Storage } from '../../src/storage/storage.ts';

export const janitor = (db: Db, storage: Storage, log: Logger = pino({ level: 'silent' })) =>
  new Janitor({ db, storage, log, ledger: new Ledger(db, 'UTC') });
