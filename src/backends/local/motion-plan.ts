// Chooses the camera move of each video model from its inputs.
import { createHash } from 'node:crypto';
import {
  add,
  bump,
  easeInOut,
  mul,
  num,
  pow,
  sin,
  sub,
  U,
  type CameraPath,
  type Expr,
} from './camera.ts';
import { prng } from './music.ts';

/** A stable 31-bit number from any strings (for choices that must repeat for identical inputs). */
export function hash31(...parts: string[]): number {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  return digest.readUInt32BE(0) & 0x7fffffff;
}

export interface StillMove {
  zoom: 'in' | 'out' | 'hold';
  /** Direction of travel of the view, a unit vector (x right, y down), or null for no lateral travel. */
  pan: [number, number] | null;
  /** 0..1, from guidance_scale. */
  strength: number;
}

const ZOOM_OUT =
  /\b(zoom(s|ing|ed)?[\s-]*out|pull(s|ing|ed)?[\s-]*(back|out)|dolly(ing)?[\s-]*out|wid(en|ening|e shot)|reveal(s|ing)?)\b/;
const ZOOM_IN =
  /\b(zoom(s|ing|ed)?[\s-]*in|push(es|ing|ed)?[\s-]*in|dolly(ing)?[\s-]*in|close[\s-]*up|closer|move(s)? in)\b/;
const PANS: Array<[RegExp, [number, number]]> = [
  [/\b(pan(s|ning|ned)?|truck(s|ing)?|track(s|ing)?)[\s-]*(to (the )?)?left\b/, [-1, 0]],
  [/\b(pan(s|ning|ned)?|truck(s|ing)?|track(s|ing)?)[\s-]*(to (the )?)?right\b/, [1, 0]],
  [/\b(tilt(s|ing|ed)?|crane(s|ing)?|pedestal(ing)?)[\s-]*up\b/, [0, -1]],
  [/\b(tilt(s|ing|ed)?|crane(s|ing)?|pedestal(ing)?)[\s-]*down\b/, [0, 1]],
];

/**
 * Model B: camera directions named in the prompt are followed ("slow push-in", "pan left", "pull back");
 * the negative prompt can rule zooming or panning out. Unnamed choices (the drift direction) come from a
 * hash of the prompt, so the same inputs always get the same move.
 */
export function planStillMove(
  prompt: string,
  negative: string | undefined,
  guidance: number,
): StillMove {
  const p = prompt.toLowerCase();
  const n = (negative ?? '').toLowerCase();
  const noZoom = /\bzoom|\bdolly|\bpush[\s-]*in|\bpull[\s-]*back/.test(n);
  const noPan = /\bpan(ning)?\b|\btilt|\bcamera (movement|motion)|\bshak/.test(n);
  const named = PANS.find(([re]) => re.test(p))?.[1] ?? null;
  let zoom: StillMove['zoom'] = ZOOM_OUT.test(p)
    ? 'out'
    : ZOOM_IN.test(p)
      ? 'in'
      : named
        ? 'hold'
        : 'in';
  if (noZoom) zoom = 'hold';
  let pan: [number, number] | null = named;
  if (!pan) {
    const angle = (hash31('drift', prompt) / 0x7fffffff) * 2 * Math.PI;
    pan = [Math.cos(angle), Math.sin(angle)];
  }
  if (noPan) pan = null;
  return { zoom, pan, strength: Math.min(1, Math.max(0, guidance)) };
}

export function stillMovePath(move: StillMove): CameraPath {
  const zoomAmount = 0.04 + 0.26 * move.strength; // at most 1.3×: further, a 720p still turns soft
  const travel = 0.5 + 0.5 * move.strength;
  const e = easeInOut(U);
  const zoom: Expr =
    move.zoom === 'in'
      ? add(num(1), mul(num(zoomAmount), e))
      : move.zoom === 'out'
        ? add(num(1), mul(num(zoomAmount), sub(num(1), e)))
        : // Holding the zoom still needs some magnification, or there is no room to pan.
          num(1 + Math.max(zoomAmount, 0.08));
  if (!move.pan) return { zoom, panX: num(0), panY: num(0) };
  // Zooming in opens the slack as it goes, so the view heads from the centre towards its side; zooming out
  // comes back from the side to the centre; a held zoom crosses from one side to the other.
  const along: Expr =
    move.zoom === 'in' ? e : move.zoom === 'out' ? sub(num(1), e) : sub(mul(num(2), e), num(1));
  const lateral = (k: number) => mul(num(k * travel), along);
  return { zoom, panX: lateral(move.pan[0]), panY: lateral(move.pan[1]) };
}

export type Amplitude = 'small' | 'medium' | 'large';

/** Model A's `auto`: similar pictures get a livelier move, very different ones a calmer move under the blend. */
export function autoAmplitude(difference: number): Amplitude {
  return difference < 0.1 ? 'large' : difference < 0.22 ? 'medium' : 'small';
}

export interface TransitionPlan {
  path: CameraPath;
  /** Start and length of the blend from the first image to the last, as fractions of the clip. */
  blendStart: number;
  blendLength: number;
}

const ZOOM_BY_AMPLITUDE: Record<Amplitude, number> = { small: 0.06, medium: 0.13, large: 0.24 };

/**
 * Model A: one camera move across the whole transition that starts and ends at rest on the full frame, so
 * the first frame is `image` and the last is `last_image`. It swells towards a seeded direction and bows
 * sideways along a seeded arc; the seed also skews when the move peaks and when the blend happens.
 */
export function planTransition(amplitude: Amplitude, seed: number): TransitionPlan {
  const rnd = prng(seed);
  const angle = rnd() * 2 * Math.PI;
  const bow = (rnd() - 0.5) * 0.9; // sideways share of the arc
  const reach = 0.65 + 0.35 * rnd(); // how far into the slack the view travels
  const skew = 0.8 + 0.45 * rnd(); // < 1 peaks late, > 1 peaks early
  const zoomAmount = ZOOM_BY_AMPLITUDE[amplitude] * (0.85 + 0.3 * rnd());
  const blendCentre = 0.42 + 0.16 * rnd();

  const u = pow(U, 1 / skew);
  const swell = bump(u);
  const arc = sin(mul(num(2 * Math.PI), u)); // 0 at both ends and the middle: bends the path
  const scale = reach / (1 + Math.abs(bow));
  const [dx, dy] = [Math.cos(angle), Math.sin(angle)];
  const panX = mul(num(scale), add(mul(num(dx), swell), mul(num(-dy * bow), arc)));
  const panY = mul(num(scale), add(mul(num(dy), swell), mul(num(dx * bow), arc)));
  return {
    path: { zoom: add(num(1), mul(num(zoomAmount), swell)), panX, panY },
    blendStart: blendCentre - 0.3,
    blendLength: 0.6,
  };
}
