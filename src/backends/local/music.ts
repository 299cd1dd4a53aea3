// A generated music bed for the `bgm` option: a chord progression played as a soft pad, a bass note on
// every beat and a plucked arpeggio, faded in and out. Key, tempo, progression and arpeggio pattern follow
// the seed, so the same seed gives the same samples. Synthesised here as 16-bit PCM (a WAV in the work
// directory) rather than in an aevalsrc expression: envelopes and chord changes are plain code this way.

export interface MusicOptions {
  durationSeconds: number;
  seed: number;
  sampleRate?: number;
}

/** A small, fast, well-distributed PRNG (mulberry32): deterministic for a given 32-bit seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Chords as semitones above the key's root (major key): I, ii, IV, V, vi.
const I = [0, 4, 7],
  ii = [2, 5, 9],
  IV = [5, 9, 12],
  V = [7, 11, 14],
  vi = [9, 12, 16];
const PROGRESSIONS = [
  [I, V, vi, IV],
  [vi, IV, I, V],
  [I, vi, IV, V],
  [I, IV, vi, V],
  [ii, V, I, vi],
];
const ROOTS = [48, 50, 52, 53, 55, 57]; // C3 … A3
const ARPEGGIOS = [
  [0, 1, 2, 1],
  [0, 2, 1, 2],
  [0, 1, 2, 3],
  [2, 1, 0, 1],
];

const hz = (midi: number) => 440 * Math.pow(2, (midi - 69) / 12);
const TAU = 2 * Math.PI;

export interface MusicPlan {
  root: number;
  bpm: number;
  progression: number[][];
  arpeggio: number[];
}

export function planMusic(seed: number): MusicPlan {
  const rnd = prng(seed ^ 0x5eed);
  const pick = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)];
  return {
    root: pick(ROOTS),
    bpm: 78 + Math.floor(rnd() * 33),
    progression: pick(PROGRESSIONS),
    arpeggio: pick(ARPEGGIOS),
  };
}

/** Renders the bed as interleaved stereo float samples in -1..1. */
export function synthesise(opts: MusicOptions): {
  left: Float32Array;
  right: Float32Array;
  sampleRate: number;
} {
  const sampleRate = opts.sampleRate ?? 44_100;
  const total = Math.round(opts.durationSeconds * sampleRate);
  const plan = planMusic(opts.seed);
  const beat = 60 / plan.bpm;
  const bar = 4 * beat;
  const left = new Float32Array(total);
  const right = new Float32Array(total);
  const fadeIn = Math.min(0.5, opts.durationSeconds / 4);
  const fadeOut = Math.min(1.2, opts.durationSeconds / 3);

  for (let i = 0; i < total; i++) {
    const t = i / sampleRate;
    const chord = plan.progression[Math.floor(t / bar) % plan.progression.length];
    const inBar = t % bar;
    // Pad: chord tones an octave up, two detuned partials each, swelling within the bar (no clicks at changes).
    const swell = Math.min(1, inBar / 0.3) * Math.min(1, (bar - inBar) / 0.3);
    let padL = 0,
      padR = 0;
    for (const step of chord) {
      const f = hz(plan.root + 12 + step);
      padL += Math.sin(TAU * f * 0.9985 * t) + 0.3 * Math.sin(TAU * 2 * f * t);
      padR += Math.sin(TAU * f * 1.0015 * t) + 0.3 * Math.sin(TAU * 2 * f * t);
    }
    // Bass: the chord's root two octaves below the pad, struck on every beat.
    const inBeat = t % beat;
    const bassEnv = Math.min(1, inBeat / 0.01) * Math.exp(-3 * inBeat);
    const fb = hz(plan.root - 12 + chord[0]);
    const bass = bassEnv * (Math.sin(TAU * fb * t) + 0.25 * Math.sin(TAU * 2 * fb * t));
    // Arpeggio: eighth notes through the chord two octaves up, plucked, alternating sides.
    const eighth = beat / 2;
    const n = Math.floor(t / eighth);
    const inNote = t - n * eighth;
    const idx = plan.arpeggio[n % plan.arpeggio.length];
    const step = idx < chord.length ? chord[idx] : chord[0] + 12;
    const fa = hz(plan.root + 24 + step);
    const pluckEnv = Math.min(1, inNote / 0.005) * Math.exp(-7 * inNote);
    const pluck = pluckEnv * (Math.sin(TAU * fa * t) + 0.2 * Math.sin(TAU * 3 * fa * t));
    const side = n % 2 === 0 ? 0.35 : 0.65;

    const master = Math.min(1, t / fadeIn) * Math.min(1, (opts.durationSeconds - t) / fadeOut);
    const shapedMaster = master * master * (3 - 2 * master); // smoothstep: fades without a corner
    left[i] = shapedMaster * (0.07 * swell * padL + 0.3 * bass + 0.16 * pluck * (1 - side) * 2);
    right[i] = shapedMaster * (0.07 * swell * padR + 0.3 * bass + 0.16 * pluck * side * 2);
  }
  normalise(left, right, 0.7);
  return { left, right, sampleRate };
}

function normalise(left: Float32Array, right: Float32Array, peak: number): void {
  let max = 0;
  for (let i = 0; i < left.length; i++) max = Math.max(max, Math.abs(left[i]), Math.abs(right[i]));
  if (max === 0) return;
  const gain = peak / max;
  for (let i = 0; i < left.length; i++) {
    left[i] *= gain;
    right[i] *= gain;
  }
}

/** The bed as a 16-bit PCM stereo WAV file. */
export function musicBedWav(opts: MusicOptions): Buffer {
  const { left, right, sampleRate } = synthesise(opts);
  const dataBytes = left.length * 4;
  const wav = Buffer.alloc(44 + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(2, 22); // channels
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 4, 28); // byte rate
  wav.writeUInt16LE(4, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < left.length; i++) {
    wav.writeInt16LE(Math.round(Math.max(-1, Math.min(1, left[i])) * 32767), 44 + i * 4);
    wav.writeInt16LE(Math.round(Math.max(-1, Math.min(1, right[i])) * 32767), 46 + i * 4);
  }
  return wav;
}
