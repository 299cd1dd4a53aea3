// Floods a refusal as the soak's attacker does (bench/lib/soak-hostile.ts): two loops sending one
// request after another, each as soon as the last was answered, for a few seconds; and the check that
// the refusals were paced (src/admission/refusal-pace.ts): the burst answered at once, the rest each
// about a second late, where unpaced two loops make hundreds.
import { expect } from 'vitest';

export interface FloodAnswer {
  status: number;
  /** how long the answer took, ms */
  ms: number;
  /** the error code of a JSON answer */
  code?: string;
  retryAfter: string | null;
}

/** Two loops sending `one` back to back for `floodMs`: every answer's status, and each one's time. */
export async function flood(
  one: () => Promise<{ status: number; headers: Headers; text: string }>,
  floodMs: number,
): Promise<FloodAnswer[]> {
  const until = Date.now() + floodMs;
  const got: FloodAnswer[] = [];
  await Promise.all(
    [0, 1].map(async () => {
      while (Date.now() < until) {
        const t0 = performance.now();
        const r = await one();
        got.push({
          status: r.status,
          ms: performance.now() - t0,
          code: r.headers.get('content-type')?.includes('json')
            ? JSON.parse(r.text).code
            : undefined,
          retryAfter: r.headers.get('retry-after'),
        });
      }
    }),
  );
  return got;
}

/** A fetch's answer read whole, in the shape flood() takes. */
export async function read(res: Promise<Response>) {
  const r = await res;
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/**
 * The refusals of a flood were paced: the burst, then about one a second a loop, and what the burst
 * refills meanwhile (one every 5 s); past the burst, each held about a second (at least that: a slow
 * machine adds to it).
 */
export function expectPaced(refused: FloodAnswer[], burst: number, floodMs: number) {
  expect(refused.length).toBeGreaterThan(burst);
  expect(refused.length).toBeLessThanOrEqual(burst + 2 * (floodMs / 1000 + 1) + 1);
  const late = refused.filter((g) => g.ms >= 900);
  expect(late.length).toBeGreaterThanOrEqual(refused.length - burst - 2);
}
