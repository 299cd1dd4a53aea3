// The stand-in's reading of requests as Stripe reads them (docs.stripe.com/api, /api/errors): the
// form encoding the official `stripe` library sends (nested parameters as
// `line_items[0][price_data][currency]=eur`), Stripe's error body, and the checks of
// checkout.sessions.create that top-ups depend on.
import { send } from './http-util.ts';

/** Stripe's form encoding back into objects: `a[b][0][c]=v` → { a: { b: [{ c: v }] } }. */
export function parseStripeForm(text: string): any {
  const root: any = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const path = k.split(/\[|\]\[|\]/).filter((x) => x !== '');
    let node = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) {
        node[part] = v;
        return;
      }
      node[part] ??= /^\d+$/.test(path[i + 1]) ? [] : {};
      node = node[part];
    });
  }
  return root;
}

export function stripeError(res: any, status: number, message: string, param?: string) {
  send(res, status, {
    error: {
      type: status === 401 ? 'invalid_request_error' : 'invalid_request_error',
      message,
      ...(param ? { param } : {}),
    },
  });
}

/** The checks of checkout.sessions.create that top-ups depend on; the message names the parameter. */
export function checkCreate(p: any): { message: string; param: string } | null {
  if (!['payment', 'setup', 'subscription'].includes(p.mode))
    return { message: 'Missing or invalid mode.', param: 'mode' };
  if (!p.success_url)
    return { message: 'Missing required param: success_url.', param: 'success_url' };
  if (p.mode === 'setup' && (!p.currency || !p.customer))
    return { message: 'A setup session here needs currency and customer.', param: 'currency' };
  if (p.mode === 'payment' && !(Array.isArray(p.line_items) && p.line_items.length > 0)) {
    return { message: 'line_items is required in payment mode.', param: 'line_items' };
  }
  for (const [i, li] of (p.line_items ?? []).entries()) {
    const pd = li.price_data;
    if (!pd && !li.price)
      return { message: 'You must specify either price or price_data.', param: `line_items[${i}]` };
    if (
      pd &&
      (!pd.currency ||
        !/^\d+$/.test(pd.unit_amount ?? '') ||
        !(pd.product || pd.product_data?.name))
    ) {
      return {
        message: 'price_data needs currency, an integer unit_amount and a product.',
        param: `line_items[${i}][price_data]`,
      };
    }
    if (!/^\d+$/.test(li.quantity ?? ''))
      return { message: 'Invalid integer quantity.', param: `line_items[${i}][quantity]` };
  }
  return null;
}
