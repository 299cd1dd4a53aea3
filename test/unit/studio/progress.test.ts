// A running render's bar and time left (studio/progress.ts), and a render page's title and inputs
// (studio/render-page.ts).
import { describe, expect, it } from 'vitest';
import { progressView, timeLeft } from '../../../src/studio/progress.ts';
import { renderTitle, shownInputs } from '../../../src/studio/render-page.ts';
import { loadCatalog } from '../../../src/backends/catalog.ts';
import { modelCards } from '../../../src/studio/presenters.ts';

const now = Date.parse('2026-01-01T00:00:30Z');
const started = '2026-01-01T00:00:00Z';

describe('progress', () => {
  it("extrapolates the backend's rate: 30 s for a quarter, about 90 s left", () => {
    const v = progressView({ status: 'queued', startedAt: started, progress: 0.25 }, null, now);
    expect(v).toEqual({ percent: 25, text: '25 % · about 2 min left' });
    const half = progressView({ status: 'queued', startedAt: started, progress: 0.5 }, null, now);
    expect(half).toEqual({ percent: 50, text: '50 % · about 30 s left' });
  });
  it("without a rate, follows the model's typical time, never full before the end", () => {
    const v = progressView({ status: 'queued', startedAt: started, progress: null }, 40, now);
    expect(v).toEqual({ percent: 75, text: 'Running · about 10 s left (by past renders)' });
    const late = progressView({ status: 'queued', startedAt: started }, 20, now);
    expect(late).toEqual({
      percent: 95,
      text: 'Running · taking longer than usual (by past renders)',
    });
  });
  it('says nothing it does not know; a waiting render gives its place', () => {
    expect(progressView({ status: 'queued', startedAt: started }, null, now)).toBeNull();
    expect(progressView({ status: 'succeeded', startedAt: started }, 10, now)).toBeNull();
    expect(progressView({ status: 'queued', queuePosition: 3 }, 10, now)).toEqual({
      percent: null,
      text: 'Waiting for a worker · position 3 in queue',
    });
    expect([timeLeft(1), timeLeft(12.4), timeLeft(200)]).toEqual([
      'almost done',
      'about 12 s left',
      'about 3 min left',
    ]);
  });
});

describe("a render's page", () => {
  const cards = modelCards(loadCatalog());
  it('is titled by the model and the first words of the prompt', () => {
    expect(renderTitle('Image to video', { prompt: 'A slow push in' })).toBe(
      'Image to video: A slow push in',
    );
    expect(renderTitle('Shot list', { text: 'one two three four five six seven eight nine' })).toBe(
      'Shot list: one two three four five six seven eight…',
    );
    expect(renderTitle('Image to video', {})).toBe('Image to video');
  });
  it('shows uploads as thumbnails through the studio, and choices by their labels', () => {
    const prefix = 'http://localhost:8080/v1/uploads/';
    const card = cards.get('rendergate/image-to-video');
    const shown = shownInputs(
      { inputs: { prompt: 'p', image: `${prefix}upl_1`, duration: 10 } },
      card,
      prefix,
    );
    expect(shown).toEqual([
      { label: 'Prompt', text: 'p' },
      { label: 'Image', image: '/uploads/upl_1' },
      { label: 'Duration', text: '10 seconds' },
    ]);
  });
});
