// What the CLI prints: JSON with --json or when stdout is not a terminal, short lines for people otherwise.
import type { Generation, Me, Model, ModelDetail, Quote } from '../types.js';

const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

export function generationLine(g: Generation): string {
  const parts = [g.id, g.status, g.modelId, euros(g.costCents)];
  if (g.refundedCents) parts.push(`refunded ${euros(g.refundedCents)}`);
  if (g.error) parts.push(`${g.error.code}: ${g.error.message}`);
  if (g.contentUrl) parts.push(g.contentUrl);
  return parts.join('  ');
}

export const human = {
  models: (models: Model[]) => models.map((m) => `${m.id}  ${m.kind}  ${m.name}`).join('\n'),
  model: (m: ModelDetail) =>
    [
      `${m.id}  ${m.kind}  ${m.name}`,
      m.description,
      '',
      ...m.fields.map((f) => {
        const type =
          f.type === 'enum'
            ? (f.values ?? []).join('|')
            : f.type + (f.media ? ` (${f.media})` : '');
        const rule = f.required
          ? 'required'
          : f.default === null
            ? 'optional'
            : `default ${f.default}`;
        return `  ${f.name}  ${type}  ${rule}${f.description ? `  ${f.description}` : ''}`;
      }),
    ].join('\n'),
  me: (me: Me) =>
    `${me.accountId}  balance ${euros(me.balanceCents)}  key ${me.key.start}… (${me.key.name ?? 'unnamed'})` +
    `  spent today ${euros(me.key.spentTodayCents)}${me.key.dailyCapCents === null ? '' : ` of ${euros(me.key.dailyCapCents)}`}`,
  quote: (q: Quote) => `${euros(q.costCents)}  ${q.modelId}  ${JSON.stringify(q.inputs)}`,
  generation: (g: Generation) =>
    [generationLine(g), ...(g.textOutput ? ['', g.textOutput] : [])].join('\n'),
};
