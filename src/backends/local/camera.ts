// Virtual camera moves over a still frame, rendered by ffmpeg's `perspective` filter: per frame it maps a
// window of the source (zoomed and panned) onto the whole output with bilinear interpolation, so motion is
// sub-pixel smooth (zoompan snaps its window to whole pixels and judders on slow moves).
//
// A path is built once as a small expression tree that both prints itself in ffmpeg's expression syntax
// and evaluates in JavaScript, so tests can check the very formulas ffmpeg runs.

export interface Expr {
  /** ffmpeg expression text; `{u}` stands for the clip position 0..1. */
  readonly text: string;
  readonly at: (u: number) => number;
}

const fmt = (v: number): string => {
  const s = (Math.round(v * 1e6) / 1e6).toFixed(6).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
};
export const num = (v: number): Expr => ({ text: v < 0 ? `(${fmt(v)})` : fmt(v), at: () => v });
export const U: Expr = { text: '{u}', at: (u) => u };
const bin =
  (op: string, fn: (a: number, b: number) => number) =>
  (a: Expr, b: Expr): Expr => ({
    text: `(${a.text}${op}${b.text})`,
    at: (u) => fn(a.at(u), b.at(u)),
  });
export const add = bin('+', (a, b) => a + b);
export const sub = bin('-', (a, b) => a - b);
export const mul = bin('*', (a, b) => a * b);
export const div = bin('/', (a, b) => a / b);
export const cos = (a: Expr): Expr => ({ text: `cos(${a.text})`, at: (u) => Math.cos(a.at(u)) });
export const sin = (a: Expr): Expr => ({ text: `sin(${a.text})`, at: (u) => Math.sin(a.at(u)) });
export const pow = (a: Expr, k: number): Expr => ({
  text: `pow(${a.text},${fmt(k)})`,
  at: (u) => Math.pow(a.at(u), k),
});

/** Sine ease in and out: 0 → 1 with zero speed at both ends. */
export const easeInOut = (u: Expr): Expr => mul(num(0.5), sub(num(1), cos(mul(num(Math.PI), u))));
/** A smooth bump: 0 at both ends, 1 in the middle, zero speed at the ends. */
export const bump = (u: Expr): Expr => mul(num(0.5), sub(num(1), cos(mul(num(2 * Math.PI), u))));

/**
 * A camera path. `zoom` ≥ 1 is the magnification (1 shows the whole frame); `panX`/`panY` in -1..1 place
 * the window within the slack that zoom leaves (−1 left/top edge, 0 centred, 1 right/bottom edge), so the
 * window can never leave the picture.
 */
export interface CameraPath {
  zoom: Expr;
  panX: Expr;
  panY: Expr;
}

export interface Window {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The source window of `path` at `u`, in fractions of the frame (for tests and reasoning). */
export function windowAt(path: CameraPath, u: number): Window {
  const iz = 1 / path.zoom.at(u);
  const cx = 0.5 * (1 + path.panX.at(u) * (1 - iz));
  const cy = 0.5 * (1 + path.panY.at(u) * (1 - iz));
  return { left: cx - iz / 2, right: cx + iz / 2, top: cy - iz / 2, bottom: cy + iz / 2 };
}

/** The `perspective` filter that renders `path` over a clip of `frames` frames. */
export function perspectiveFilter(path: CameraPath, frames: number): string {
  const iz = div(num(1), path.zoom);
  const slack = sub(num(1), iz);
  const centre = (pan: Expr) => mul(num(0.5), add(num(1), mul(pan, slack)));
  const lo = (pan: Expr) => sub(centre(pan), mul(num(0.5), iz));
  const hi = (pan: Expr) => add(centre(pan), mul(num(0.5), iz));
  const u = `min(in/${Math.max(1, frames - 1)},1)`;
  // Quoted, so the commas and colons inside the expressions need no filtergraph escaping.
  const e = (scale: 'W' | 'H', x: Expr) => `'${scale}*${x.text.replaceAll('{u}', u)}'`;
  const [l, r, t, b] = [
    e('W', lo(path.panX)),
    e('W', hi(path.panX)),
    e('H', lo(path.panY)),
    e('H', hi(path.panY)),
  ];
  // sense=source: the four points of the source window are sent to the corners of the output.
  return (
    `perspective=x0=${l}:y0=${t}:x1=${r}:y1=${t}:x2=${l}:y2=${b}:x3=${r}:y3=${b}` +
    ':interpolation=linear:sense=source:eval=frame'
  );
}
