// A fal app's block in the catalog: `owner/app` (with any subpath), the key (a secret), the queue's
// base address and the CEL that makes the request's input.
import type { CelMap } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import { isText } from '../../domain/catalog-check.ts';
import { checkBaseUrl, checkCelMap, checkSecretForm } from '../shared/catalog-checks.ts';

export interface FalBinding {
  driver: 'fal';
  app: string;
  apiKey: string;
  baseUrl: string;
  inputs?: CelMap;
}

export const falCatalog: CatalogDriver<FalBinding> = {
  keys: ['app', 'apiKey', 'baseUrl', 'inputs'],
  check(raw, bad) {
    if (!isText(raw.app) || !/^[^/\s]+\/[^\s]+$/.test(raw.app))
      bad('backend.app must be owner/app (e.g. fal-ai/some-model)');
    const apiKey = checkSecretForm(raw, 'apiKey', bad, true);
    const baseUrl = checkBaseUrl(raw, bad, 'https://queue.fal.run');
    const inputs = checkCelMap(raw.inputs, 'inputs', bad);
    return {
      driver: 'fal',
      app: raw.app as string,
      apiKey: apiKey ?? '',
      baseUrl,
      ...(inputs ? { inputs } : {}),
    };
  },
  cel: (b) => ({ inputs: b.inputs }),
};
