// Picks the storage driver named by RENDERGATE_STORAGE (see src/config.ts), so the composition root
// never has to know which implementations exist.
import type { StorageConfig } from '../config.ts';
import { FileStorage } from './file.ts';
import { S3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

export function createStorage(
  config: StorageConfig,
  env: NodeJS.ProcessEnv = process.env,
): Storage {
  switch (config.driver) {
    case 'file':
      return new FileStorage(config.root);
    case 's3':
      // Credentials, region and endpoint come from the standard AWS variables, read by S3Storage.
      return new S3Storage({ bucket: config.bucket, prefix: config.prefix }, env);
  }
}
