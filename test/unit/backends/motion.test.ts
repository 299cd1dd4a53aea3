import { describe, expect, it } from 'vitest';
import {
  perspectiveFilter,
  windowAt,
  type CameraPath,
} from '../../../src/backends/local/camera.ts';
import { progressFraction } from '../../../src/backends/local/ffmpeg.ts';
import { chooseFit } from '../../../src/backends/local/frame.ts';
import {
  autoAmplitude,
  planStillMove,
  planTransition,
  stillMovePath,
  type Amplitude,
} from '../../../src/backends/local/motion-plan.ts';
import { transitionSeed } from '../../../src/backends/local/start-end-to-video.ts';

const samples = Array.from({ length: 101 }, (_, i) => i / 100);

function expectInside(path: CameraPath) {
  for (const u of samples) {
    const w = windowAt(path, u);
    expect(w.left).toBeGreaterThanOrEqual(-1e-9);
    expect(w.top).toBeGreaterThanOrEqual(-1e-9);
    expect(w.right).toBeLessThanOrEqual(1 + 1e-9);
    expect(w.bottom).toBeLessThanOrEqual(1 + 1e-9);
  }
}

const travel = (path: CameraPath) => {
  const a = windowAt(path, 0),
    b = windowAt(path, 1);
  return (
    Math.abs(a.left - b.left) +
    Math.abs(a.top - b.top) +
    Math.abs(a.right - b.right) +
    Math.abs(a.bottom - b.bottom)
  );
};

describe('model B camera move', () => {
  it('follows camera words in the prompt', () => {
    expect(planStillMove('slow push-in on a sunset', undefined, 0.5).zoom).toBe('in');
    expect(planStillMove('the camera pulls back to reveal the bay', undefined, 0.5).zoom).toBe(
      'out',
    );
    expect(planStillMove('Zoom out from the tower', undefined, 0.5).zoom).toBe('out');
    expect(planStillMove('pan left across the skyline', undefined, 0.5)).toMatchObject({
      zoom: 'hold',
      pan: [-1, 0],
    });
    expect(planStillMove('tilt up to the sky', undefined, 0.5).pan).toEqual([0, -1]);
  });

  it('leaves out what the negative prompt rules out', () => {
    expect(planStillMove('push in on the face', 'zoom', 0.5).zoom).toBe('hold');
    expect(planStillMove('a quiet lake', 'camera movement, shaky', 0.5).pan).toBeNull();
  });

  it('picks the same drift for the same prompt and another for another prompt', () => {
    expect(planStillMove('a quiet lake', undefined, 0.5)).toEqual(
      planStillMove('a quiet lake', undefined, 0.5),
    );
    expect(planStillMove('a quiet lake', undefined, 0.5).pan).not.toEqual(
      planStillMove('a busy port', undefined, 0.5).pan,
    );
  });

  it('moves more with a higher guidance_scale and never leaves the picture', () => {
    for (const prompt of [
      'a quiet lake',
      'pull back from the tower',
      'pan right over fields',
      'tilt down',
    ]) {
      const weak = stillMovePath(planStillMove(prompt, undefined, 0));
      const strong = stillMovePath(planStillMove(prompt, undefined, 1));
      expectInside(weak);
      expectInside(strong);
      expect(travel(strong)).toBeGreaterThan(travel(weak) * 1.5);
    }
  });
});

describe('model A transition', () => {
  const amplitudes: Amplitude[] = ['small', 'medium', 'large'];

  it('starts and ends at rest on the full frame and stays inside the picture', () => {
    for (const amplitude of amplitudes) {
      for (const seed of [0, 1, 42, 2147483647]) {
        const { path, blendStart, blendLength } = planTransition(amplitude, seed);
        expect(windowAt(path, 0)).toEqual({ left: 0, top: 0, right: 1, bottom: 1 });
        const end = windowAt(path, 1);
        for (const v of [end.left, end.top]) expect(Math.abs(v)).toBeLessThan(1e-9);
        for (const v of [end.right, end.bottom]) expect(Math.abs(v - 1)).toBeLessThan(1e-9);
        expectInside(path);
        expect(blendStart).toBeGreaterThan(0);
        expect(blendStart + blendLength).toBeLessThan(1);
      }
    }
  });

  it('moves further with a larger amplitude', () => {
    const peak = (a: Amplitude) =>
      1 / Math.max(...samples.map((u) => planTransition(a, 7).path.zoom.at(u)));
    expect(peak('large')).toBeLessThan(peak('medium'));
    expect(peak('medium')).toBeLessThan(peak('small'));
  });

  it('takes another path for another seed, the same for the same seed', () => {
    const f = (seed: number) => perspectiveFilter(planTransition('medium', seed).path, 125);
    expect(f(1)).toBe(f(1));
    expect(f(1)).not.toBe(f(2));
  });

  it('chooses auto amplitude from how different the pictures are', () => {
    expect(autoAmplitude(0.02)).toBe('large');
    expect(autoAmplitude(0.15)).toBe('medium');
    expect(autoAmplitude(0.5)).toBe('small');
  });

  it('derives a stable seed from the inputs when none is given', () => {
    const inputs = {
      prompt: 'dawn to dusk',
      image: 'https://x.test/a.png',
      last_image: 'https://x.test/b.png',
      duration: 5,
    };
    const a = transitionSeed(inputs);
    const b = transitionSeed({
      duration: 5,
      last_image: 'https://x.test/b.png',
      image: 'https://x.test/a.png',
      prompt: 'dawn to dusk',
    });
    const c = transitionSeed({ ...inputs, prompt: 'dusk to dawn' });
    expect(transitionSeed({ ...inputs, seed: 99 })).toBe(99);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThanOrEqual(2147483647);
  });
});

describe('perspective filter text', () => {
  it('quotes each corner expression and evaluates per frame', () => {
    const text = perspectiveFilter(planTransition('small', 3).path, 50);
    expect(text).toMatch(/^perspective=x0='W\*.*':y0='H\*.*':x1='W\*.*/);
    expect(text).toContain('min(in/49,1)');
    expect(text).toContain('eval=frame');
    expect(text).not.toMatch(/NaN|Infinity|e-\d/);
  });
});

describe('framing', () => {
  it('fills for shapes near the frame and boxes the rest', () => {
    const frame = { width: 1280, height: 720 };
    expect(chooseFit(1920, 1080, frame)).toBe('fill');
    expect(chooseFit(1600, 1000, frame)).toBe('fill');
    expect(chooseFit(1000, 1000, frame)).toBe('boxed');
    expect(chooseFit(720, 1280, frame)).toBe('boxed');
    expect(chooseFit(3000, 1000, frame)).toBe('boxed');
  });
});

describe('ffmpeg progress lines', () => {
  it('turns out_time into a fraction of the output and progress=end into 1', () => {
    expect(progressFraction('out_time=00:00:02.500000', 5)).toBeCloseTo(0.5);
    expect(progressFraction('out_time=00:01:00.000000', 5)).toBe(1);
    expect(progressFraction('out_time=-00:00:00.023220', 5)).toBe(0);
    expect(progressFraction('progress=end', 5)).toBe(1);
    expect(progressFraction('progress=continue', 5)).toBeUndefined();
    expect(progressFraction('frame=12', 5)).toBeUndefined();
    expect(progressFraction('out_time=00:00:02.500000', undefined)).toBeUndefined();
  });
});
