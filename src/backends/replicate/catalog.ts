// A Replicate model's block in the catalog: `owner/name`, an optional pinned version, the API token
// (a secret), the API's base address and the CEL that makes the prediction's input.
import type { CelMap } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import { isText } from '../../domain/catalog-check.ts';
import { checkBaseUrl, checkCelMap, checkSecretForm } from '../shared/catalog-checks.ts';

export interface ReplicateBinding {
  driver: 'replicate';
  model: string;
  version?: string;
  apiToken: string;
  baseUrl: string;
  inputs?: CelMap;
}

export const replicateCatalog: CatalogDriver<ReplicateBinding> = {
  keys: ['model', 'version', 'apiToken', 'baseUrl', 'inputs'],
  check(raw, bad) {
    if (!isText(raw.model) || !/^[^/\s]+\/[^/\s]+$/.test(raw.model))
      bad('backend.model must be owner/name');
    if (raw.version !== undefined && !isText(raw.version))
      bad('backend.version must be a version id');
    const apiToken = checkSecretForm(raw, 'apiToken', bad, true);
    const baseUrl = checkBaseUrl(raw, bad, 'https://api.replicate.com');
    const inputs = checkCelMap(raw.inputs, 'inputs', bad);
    return {
      driver: 'replicate',
      model: raw.model as string,
      ...(raw.version ? { version: raw.version as string } : {}),
      apiToken: apiToken ?? '',
      baseUrl,
      ...(inputs ? { inputs } : {}),
    };
  },
  cel: (b) => ({ inputs: b.inputs }),
};
