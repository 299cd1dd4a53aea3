// Compiles the CEL of a model's backend once, at catalog load (like its price), and tries it on sample
// inputs so that an expression that fails for some inputs (a wrong type, a missing optional field read
// without has()) is refused at start instead of failing renders.
import type { ModelDef, ResolvedInputs } from './catalog.ts';
import { compileMapping, MappingError, type Mapping } from './mapping.ts';

export interface BackendCel {
  /** Cog, Replicate, fal: the input each name of the backend gets; absent = the resolved inputs as they are. */
  inputs?: Mapping;
  /** ComfyUI: the value of each "<node>.inputs.<name>" of the workflow. */
  bindings?: Mapping;
  /** OpenAI: each message's content, by its index. */
  messages?: Mapping;
  /** OpenAI: extra request parameters (max_tokens, temperature, …). */
  params?: Mapping;
}

export function compileBackendCel(def: ModelDef): BackendCel {
  const b = def.backend;
  const out: BackendCel = {};
  const problems: string[] = [];
  const compile = (exprs: Record<string, string> | undefined, what: string) => {
    if (!exprs) return undefined;
    try {
      return compileMapping(def.fields, exprs, what);
    } catch (e) {
      if (!(e instanceof MappingError)) throw e;
      problems.push(e.message);
      return undefined;
    }
  };
  if (b.driver === 'cog' || b.driver === 'replicate' || b.driver === 'fal')
    out.inputs = compile(b.inputs, 'inputs');
  if (b.driver === 'comfyui') out.bindings = compile(b.bindings, 'bindings');
  if (b.driver === 'openai') {
    out.messages = compile(
      Object.fromEntries(b.messages.map((m, i) => [String(i), m.content])),
      'messages',
    );
    out.params = compile(b.params, 'params');
  }
  if (problems.length > 0) throw new MappingError(problems.join('; '));
  return out;
}

const SAMPLES = 500;

/** Runs each mapping on sample inputs; the first failure of each, with the inputs that caused it. */
export function sampleBackendCel(
  def: ModelDef,
  cel: BackendCel,
  samples: Iterable<ResolvedInputs>,
): string[] {
  const problems = new Map<string, string>();
  let n = 0;
  for (const sample of samples) {
    if (n++ >= SAMPLES) break;
    for (const [what, mapping] of Object.entries(cel) as [string, Mapping | undefined][]) {
      if (!mapping || problems.has(what)) continue;
      try {
        const out = mapping.evaluate(sample);
        if (what === 'messages') {
          for (const [i, v] of Object.entries(out))
            if (typeof v !== 'string') throw new MappingError(`messages.${i} must yield a string`);
        }
      } catch (e) {
        if (!(e instanceof MappingError)) throw e;
        problems.set(
          what,
          `model "${def.id}": backend ${e.message} (for inputs ${JSON.stringify(sample).slice(0, 200)})`,
        );
      }
    }
  }
  return [...problems.values()];
}
