// The studio's form ↔ inputs conversion over every field type of the default catalog: it only reads
// types, so the API's own validation decides, and its messages land beside the right fields.
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../src/backends/catalog.ts';
import { parseRenderRequest } from '../../../src/domain/inputs.ts';
import { ApiError } from '../../../src/domain/errors.ts';
import { fieldErrors, formFields, formInputs } from '../../../src/studio/model-form.ts';
import { parseEuros } from '../../../src/studio/routes/keys.ts';
import { localPath } from '../../../src/studio/form-body.ts';

const catalog = loadCatalog();
const A = catalog.get('rendergate/start-end-to-video')!.def;

describe('model forms', () => {
  it('has a widget per field type, filled with the defaults', () => {
    const fields = formFields(A, null, {});
    expect(fields.map((f) => [f.def.name, f.widget, f.value])).toEqual([
      ['prompt', 'textarea', ''],
      ['image', 'url', ''],
      ['last_image', 'url', ''],
      ['duration', 'number', '5'],
      ['resolution', 'select', '720p'],
      ['bgm', 'toggle', 'true'],
      ['movement_amplitude', 'select', 'auto'],
      ['seed', 'number', ''],
    ]);
    expect(fields.find((f) => f.def.name === 'bgm')!.checked).toBe(true);
    expect(fields.find((f) => f.def.name === 'duration')!.step).toBe('1');
    expect(
      fields
        .find((f) => f.def.name === 'resolution')!
        .options.filter((o) => o.selected)
        .map((o) => o.value),
    ).toEqual(['720p']);
  });

  it('turns form strings into typed inputs the API accepts', () => {
    const body = {
      prompt: 'p',
      image: ' https://example.com/a.png ',
      last_image: 'https://example.com/b.png',
      duration: '7',
      resolution: '1080p',
      bgm: ['false'],
      movement_amplitude: 'large',
      seed: '',
      _csrf: 'x',
      _idem: 'y',
    };
    const inputs = formInputs(A, body);
    expect(inputs).toEqual({
      prompt: 'p',
      image: 'https://example.com/a.png',
      last_image: 'https://example.com/b.png',
      duration: 7,
      resolution: '1080p',
      bgm: false,
      movement_amplitude: 'large',
    });
    expect(parseRenderRequest(catalog, { modelId: A.id, inputs }).inputs).toMatchObject({
      duration: 7,
      bgm: false,
    });
    // a checked toggle sends its hidden "false" then "true": the last wins
    expect(formInputs(A, { bgm: ['false', 'true'] }).bgm).toBe(true);
    // numeric enum values stay numbers (model B's duration is [5, 10])
    expect(
      formInputs(catalog.get('rendergate/image-to-video')!.def, { duration: '10' }).duration,
    ).toBe(10);
  });

  it('leaves what is not a number as it was, so the API names the field', () => {
    const inputs = formInputs(A, {
      prompt: 'p',
      image: 'https://e.com/a.png',
      last_image: 'https://e.com/b.png',
      duration: 'five',
      seed: '1.5',
    });
    expect(inputs.duration).toBe('five');
    let err: ApiError | null = null;
    try {
      parseRenderRequest(catalog, { modelId: A.id, inputs });
    } catch (e) {
      err = e as ApiError;
    }
    expect(fieldErrors(err!.details)).toEqual({
      duration: 'must be an integer between 1 and 10',
      seed: 'must be an integer between 0 and 2147483647',
    });
  });

  it('reads euros and safe local paths', () => {
    expect([
      parseEuros(''),
      parseEuros('5'),
      parseEuros('2.5'),
      parseEuros('12,05'),
      parseEuros('-1'),
      parseEuros('1.234'),
      parseEuros('abc'),
    ]).toEqual([null, 500, 250, 1205, undefined, undefined, undefined]);
    expect([
      localPath('/history'),
      localPath('//evil.example'),
      localPath('/\\evil'),
      localPath('https://evil.example'),
      localPath(undefined),
    ]).toEqual(['/history', '/', '/', '/', '/']);
  });
});
