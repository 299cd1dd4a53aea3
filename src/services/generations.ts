// The renders service the routes, the studio and the operator use: one object over its three parts,
// create (generation-create.ts), reads (generation-reads.ts), and cancel, delete and the operator's
// refund (generation-removal.ts).
import type { Storage } from '../storage/storage.ts';
import type { Waiters } from '../admission/waiters.ts';
import type { GenerationCache } from './generation-cache.ts';
import { GenerationCreate, type GenerationCreateOptions } from './generation-create.ts';
import { GenerationReads } from './generation-reads.ts';
import { GenerationRemoval } from './generation-removal.ts';

export interface GenerationsOptions extends GenerationCreateOptions {
  storage: Storage;
  /** Polls answered from memory (API processes). */
  cache?: GenerationCache;
  /** `Prefer: wait` requests. */
  waiters?: Waiters;
  /** Live event streams. */
  streams?: Waiters;
}

export class Generations {
  readonly checkUploads: GenerationCreate['checkUploads'];
  readonly create: GenerationCreate['create'];
  readonly waitJson: GenerationReads['waitJson'];
  readonly forget: GenerationReads['forget'];
  readonly reportedTokens: GenerationReads['reportedTokens'];
  readonly cachedJson: GenerationReads['cachedJson'];
  readonly getJson: GenerationReads['getJson'];
  readonly events: GenerationReads['events'];
  readonly content: GenerationReads['content'];
  readonly list: GenerationReads['list'];
  readonly cancel: GenerationRemoval['cancel'];
  readonly delete: GenerationRemoval['delete'];
  readonly purgeContent: GenerationRemoval['purgeContent'];
  readonly adminRefund: GenerationRemoval['adminRefund'];
  readonly accountOf: GenerationRemoval['accountOf'];

  constructor(o: GenerationsOptions) {
    const made = new GenerationCreate(o);
    const reads = new GenerationReads(o);
    const removal = new GenerationRemoval(o);
    this.checkUploads = made.checkUploads.bind(made);
    this.create = made.create.bind(made);
    this.waitJson = reads.waitJson.bind(reads);
    this.forget = reads.forget.bind(reads);
    this.reportedTokens = reads.reportedTokens.bind(reads);
    this.cachedJson = reads.cachedJson.bind(reads);
    this.getJson = reads.getJson.bind(reads);
    this.events = reads.events.bind(reads);
    this.content = reads.content.bind(reads);
    this.list = reads.list.bind(reads);
    this.cancel = removal.cancel.bind(removal);
    this.delete = removal.delete.bind(removal);
    this.purgeContent = removal.purgeContent.bind(removal);
    this.adminRefund = removal.adminRefund.bind(removal);
    this.accountOf = removal.accountOf.bind(removal);
  }
}
