// The MCP tools (docs/mcp.md): the catalog, quotes and renders of /v1, for an agent holding a key.
// Each tool calls the same services as its /v1 route with the key's principal, so the key's
// daily cap, its budgets, its mode and its account's balance bound what an agent does exactly as
// they bound any other client; its answer is the same object as /v1's.
import crypto from 'node:crypto';
import { ApiError } from '../../domain/errors.ts';
import { toPublicModel } from '../../domain/model-view.ts';
import { inputSchemaOf } from '../../domain/input-schema.ts';
import type { Principal } from '../../domain/principal.ts';
import { idempotencyKeyOf } from '../../web/idempotency-key.ts';
import type { Ctx } from '../../web/context.ts';
import { quoteAnswer } from '../routes/quote.post.ts';

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  annotations: { readOnlyHint: boolean; idempotentHint?: boolean; openWorldHint: false };
  /** The /v1 object it answers; throws ApiError as /v1 would. */
  run: (p: Principal, args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
}

const MODEL_ID = { type: 'string', description: 'A model id of the catalog, e.g. vendor/model.' };
const INPUTS = {
  type: 'object',
  description: "The model's inputs, as get_model's inputSchema describes them.",
};
const GEN_ID = { type: 'string', description: 'A generation id (gen_…).' };
const READ = { readOnlyHint: true, openWorldHint: false } as const;

/** A string argument, or the contract's INVALID_INPUT naming it. */
function text(args: Record<string, unknown>, field: string): string {
  const v = args[field];
  if (typeof v !== 'string' || v === '')
    throw new ApiError('INVALID_INPUT', `${field}: must be a non-empty string.`, [
      { field, message: 'must be a non-empty string' },
    ]);
  return v;
}

/** The tools, bound to the services of `ctx`. */
export function mcpTools(ctx: Ctx): Tool[] {
  const list = { data: ctx.catalog.models.map(toPublicModel), nextCursor: null };
  const detail = new Map(
    ctx.catalog.models.map((m) => [m.id, { ...toPublicModel(m), inputSchema: inputSchemaOf(m) }]),
  );
  const json = (s: string): unknown => JSON.parse(s);
  return [
    {
      name: 'list_models',
      title: 'List models',
      description: 'The models of the catalog: id, output type, price rules and inputs.',
      inputSchema: { type: 'object', properties: {} },
      annotations: READ,
      run: async () => list,
    },
    {
      name: 'get_model',
      title: 'Get a model',
      description: 'One model of the catalog, with the JSON Schema of its inputs.',
      inputSchema: { type: 'object', properties: { id: MODEL_ID }, required: ['id'] },
      annotations: READ,
      run: async (_p, args) => {
        const id = text(args, 'id');
        const m = ctx.catalog.get(id);
        if (!m)
          throw new ApiError('MODEL_NOT_FOUND', `No model ${JSON.stringify(id.slice(0, 200))}.`);
        return detail.get(m.id);
      },
    },
    {
      name: 'quote',
      title: 'Quote a render',
      description: 'The price in euro cents of a render with these inputs; nothing is charged.',
      inputSchema: {
        type: 'object',
        properties: { modelId: MODEL_ID, inputs: INPUTS },
        required: ['modelId', 'inputs'],
      },
      annotations: READ,
      run: async (p, args) => {
        const { json: answer, named } = quoteAnswer(ctx, args);
        if (named.size > 0) await ctx.uploads.checkInputs(p, named);
        return json(answer);
      },
    },
    {
      name: 'create_generation',
      title: 'Start a render',
      description:
        "Starts a render, charging its price to the key's account within the key's daily cap " +
        'and budgets. The same idempotencyKey again returns the same render, charged once.',
      inputSchema: {
        type: 'object',
        properties: {
          modelId: MODEL_ID,
          inputs: INPUTS,
          idempotencyKey: {
            type: 'string',
            description: 'Up to 255 printable ASCII characters; repeat it to retry safely.',
          },
        },
        required: ['modelId', 'inputs'],
      },
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
      run: async (p, args) => {
        const given = args.idempotencyKey;
        const key =
          given === undefined
            ? crypto.randomUUID()
            : typeof given === 'string'
              ? idempotencyKeyOf(given)
              : undefined;
        if (key === undefined)
          throw new ApiError(
            'IDEMPOTENCY_KEY_REQUIRED',
            'idempotencyKey: 1 to 255 printable ASCII characters (e.g. a UUID).',
          );
        const { idempotencyKey: _, ...body } = args;
        return (await ctx.generations.create(p, body, key)).body;
      },
    },
    {
      name: 'get_generation',
      title: 'Get a render',
      description: 'A render: its status, progress, price, and its contentUrl or text once done.',
      inputSchema: { type: 'object', properties: { id: GEN_ID }, required: ['id'] },
      annotations: READ,
      run: async (p, args) => json(await ctx.generations.getJson(p, text(args, 'id'))),
    },
    {
      name: 'wait_generation',
      title: 'Wait for a render',
      description:
        'The render once it is final (succeeded, failed, refunded), or as it is after `seconds` ' +
        '(1 to 60, default 60).',
      inputSchema: {
        type: 'object',
        properties: { id: GEN_ID, seconds: { type: 'integer', minimum: 1, maximum: 60 } },
        required: ['id'],
      },
      annotations: READ,
      run: async (p, args, signal) => {
        const s = args.seconds ?? 60;
        if (typeof s !== 'number' || !Number.isInteger(s) || s < 1 || s > 60)
          throw new ApiError('INVALID_INPUT', 'seconds: a whole number from 1 to 60.', [
            { field: 'seconds', message: 'must be a whole number from 1 to 60' },
          ]);
        return json((await ctx.generations.waitJson(p, text(args, 'id'), s, signal)).json);
      },
    },
  ];
}
