// A ComfyUI model's block in the catalog: a pool of servers, the API-format workflow (a file beside
// the catalog, read once at load), the CEL bound to inputs of its nodes, and the node whose file is
// the output. ComfyUI renders files, so the model's output is a file.
import type { CelMap } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import { isObject, isText } from '../../domain/catalog-check.ts';
import { checkCelMap } from '../shared/catalog-checks.ts';
import { checkPool, POOL_KEYS, type ServerPool } from '../shared/pool.ts';

export interface ComfyBinding extends ServerPool {
  driver: 'comfyui';
  workflow: string;
  graph: Record<string, unknown>;
  bindings: CelMap;
  outputNode?: string;
}

export const comfyCatalog: CatalogDriver<ComfyBinding> = {
  keys: [...POOL_KEYS, 'workflow', 'bindings', 'outputNode'],
  check(raw, bad, readJson) {
    const pool = checkPool(raw, bad);
    const bindings = checkCelMap(raw.bindings, 'bindings', bad, true) ?? {};
    if (!isText(raw.workflow))
      return void bad(
        'backend.workflow must name an API-format workflow file (relative to the catalog)',
      );
    let graph: unknown;
    try {
      graph = readJson(raw.workflow);
    } catch (e) {
      return void bad(`backend.workflow ${raw.workflow}: ${(e as Error).message}`);
    }
    if (
      !isObject(graph) ||
      !Object.values(graph).every(
        (node) => isObject(node) && typeof node.class_type === 'string' && isObject(node.inputs),
      )
    ) {
      return void bad(
        `backend.workflow ${raw.workflow} is not an API-format workflow ({ "<node id>": { class_type, inputs } }); export it with "Save (API)"`,
      );
    }
    for (const path of Object.keys(bindings)) {
      const [node, inputs, name, ...rest] = path.split('.');
      if (inputs !== 'inputs' || !name || rest.length > 0)
        bad(`backend.bindings "${path}" must be "<node id>.inputs.<input name>"`);
      else if (!Object.hasOwn(graph, node))
        bad(`backend.bindings "${path}": the workflow has no node "${node}"`);
    }
    if (
      raw.outputNode !== undefined &&
      (typeof raw.outputNode !== 'string' || !Object.hasOwn(graph, raw.outputNode))
    ) {
      bad(`backend.outputNode ${JSON.stringify(raw.outputNode)} is not a node id of the workflow`);
    }
    return (
      pool && {
        driver: 'comfyui',
        ...pool,
        workflow: raw.workflow,
        graph,
        bindings,
        ...(typeof raw.outputNode === 'string' ? { outputNode: raw.outputNode } : {}),
      }
    );
  },
  checkOutput(output, bad) {
    if (output.type !== 'file')
      bad('the comfyui driver renders files: the model needs output {type: file, contentType}');
  },
  cel: (b) => ({ bindings: b.bindings }),
};
