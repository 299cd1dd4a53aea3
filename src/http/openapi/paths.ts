// The operations of /v1 (docs/api.md), one module a resource; the order is the document's.
import { generationPaths } from './paths-generations.ts';
import { modelPaths } from './paths-models.ts';
import { uploadPaths } from './paths-uploads.ts';
import { webhookPaths } from './paths-webhooks.ts';
import { usagePaths } from './paths-usage.ts';

export function paths() {
  return {
    ...modelPaths(),
    ...generationPaths(),
    ...uploadPaths(),
    ...webhookPaths(),
    ...usagePaths(),
  };
}
