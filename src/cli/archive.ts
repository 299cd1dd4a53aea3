// The backup archive: one gzipped tar holding manifest.json, db/ (one COPY file per table, db/dump.ts)
// and files/ (the stored files, with file storage). Written next to its destination under a temporary
// name and renamed when complete, so a FILE that exists is a whole backup.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import * as tar from 'tar';
import type { DatabaseDump } from '../db/dump.ts';
import { CliError } from './cli-error.ts';

export const FORMAT = 'rendergate-backup/1';

export interface Manifest {
  format: typeof FORMAT;
  /** The release that made the backup. */
  version: string;
  createdAt: string;
  database: DatabaseDump;
  /** `files`: how many stored files the archive holds (none with S3 storage: the bucket keeps them). */
  storage: { driver: 'file' | 's3'; files: number };
}

export async function writeArchive(staging: string, out: string): Promise<void> {
  const partial = `${out}.partial-${process.pid}`;
  try {
    await tar.create({ gzip: true, file: partial, cwd: staging, portable: true }, [
      'manifest.json',
      'db',
      'files',
    ]);
    const fd = await fsp.open(partial, 'r');
    try {
      await fd.sync();
    } finally {
      await fd.close();
    }
    await fsp.rename(partial, out);
  } catch (e) {
    await fsp.rm(partial, { force: true });
    throw e;
  }
}

export async function readArchive(file: string, staging: string): Promise<Manifest> {
  if (!fs.existsSync(file)) throw new CliError(`no such backup file: ${file}`);
  try {
    await tar.extract({ file, cwd: staging, strict: true });
  } catch (e) {
    throw new CliError(`${file} is not a readable backup archive: ${(e as Error).message}`);
  }
  const manifestFile = path.join(staging, 'manifest.json');
  const manifest = fs.existsSync(manifestFile)
    ? (JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest)
    : null;
  if (manifest?.format !== FORMAT)
    throw new CliError(`${file} is not a Rendergate backup (format ${FORMAT})`);
  return manifest;
}

/** Every regular file under `root` (relative paths), skipping the storage's own scratch directory. */
export async function storedFiles(root: string): Promise<string[]> {
  if (!fs.existsSync(root)) return [];
  const entries = await fsp.readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((rel) => rel.split(path.sep)[0] !== '.tmp');
}
