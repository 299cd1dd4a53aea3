import { describe, expect, it } from 'vitest';
import { musicBedWav, planMusic, synthesise } from '../../../src/backends/local/music.ts';

const rms = (x: Float32Array, from: number, to: number) => {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i] * x[i];
  return Math.sqrt(s / Math.max(1, to - from));
};

describe('music bed', () => {
  it('lasts exactly the requested duration', () => {
    for (const d of [1, 5, 10])
      expect(synthesise({ durationSeconds: d, seed: 1 }).left.length).toBe(d * 44_100);
  });

  it('is the same for the same seed and different for another', () => {
    const a = musicBedWav({ durationSeconds: 2, seed: 5 });
    expect(musicBedWav({ durationSeconds: 2, seed: 5 }).equals(a)).toBe(true);
    expect(musicBedWav({ durationSeconds: 2, seed: 6 }).equals(a)).toBe(false);
  });

  it('varies key, tempo or progression with the seed', () => {
    const plans = new Set(Array.from({ length: 20 }, (_, s) => JSON.stringify(planMusic(s))));
    expect(plans.size).toBeGreaterThan(10);
  });

  it('is audible, peaks at -3 dBFS and fades in and out', () => {
    const { left, right, sampleRate } = synthesise({ durationSeconds: 5, seed: 3 });
    const peak = [...left, ...right].reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(peak).toBeCloseTo(0.7, 3);
    const body = rms(left, 2 * sampleRate, 3 * sampleRate);
    expect(body).toBeGreaterThan(0.05);
    expect(rms(left, 0, sampleRate / 100)).toBeLessThan(body / 20);
    expect(rms(left, left.length - sampleRate / 100, left.length)).toBeLessThan(body / 20);
    expect(Math.abs(left[0])).toBeLessThan(1e-3);
    expect(Math.abs(left[left.length - 1])).toBeLessThan(1e-3);
  });

  it('is stereo, not two copies of one channel', () => {
    const { left, right } = synthesise({ durationSeconds: 2, seed: 9 });
    let diff = 0;
    for (let i = 0; i < left.length; i++) diff += Math.abs(left[i] - right[i]);
    expect(diff / left.length).toBeGreaterThan(0.001);
  });

  it('writes a valid 16-bit stereo PCM WAV', () => {
    const wav = musicBedWav({ durationSeconds: 1, seed: 2 });
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.subarray(8, 16).toString('ascii')).toBe('WAVEfmt ');
    expect(wav.readUInt16LE(20)).toBe(1);
    expect(wav.readUInt16LE(22)).toBe(2);
    expect(wav.readUInt32LE(24)).toBe(44_100);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.readUInt32LE(40)).toBe(44_100 * 4);
    expect(wav.length).toBe(44 + 44_100 * 4);
  });
});
