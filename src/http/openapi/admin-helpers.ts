// What admin-document.ts hands the modules of its parts (members, audit, budgets…): its own `op`
// (an operation with the document's errors and shape) and schema helpers, so that every part is
// described the same way.
export type AdminOp = (
  id: string,
  summary: string,
  ok: string,
  okSchema: string,
  more?: Record<string, unknown>,
  errors?: number[],
) => unknown;

export interface AdminHelpers {
  op: AdminOp;
  body: (name: string) => unknown;
  ref: (name: string) => unknown;
  obj: (required: string[], properties: Record<string, unknown>) => unknown;
}
