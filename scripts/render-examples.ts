// Makes the example files of the built-in catalog (catalog/examples/): two input images drawn here, and
// the output of each built-in model rendered by its real renderer (src/backends/local) from the
// inputs catalog/default.yaml lists, then made small for the repository (a low-resolution, short MP4).
// Run it again after a renderer changes: `node --import tsx scripts/render-examples.ts`. The shot list's text is
// printed, to be pasted into the catalog.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { createLocalBackends } from '../src/backends/local/index.ts';
import { ffmpegPath } from '../src/backends/local/ffmpeg.ts';
import type { ResolvedInputs } from '../src/domain/catalog.ts';
import type { RenderContext } from '../src/backends/types.ts';

const OUT = path.resolve(import.meta.dirname, '../catalog/examples');
const run = promisify(execFile);

/** A lighthouse on a headland against the sky, the sea below: `sky` and `sea` set the hour. */
const scene = (sky: [string, string], sea: string, light: boolean) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360">
<defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${sky[0]}"/><stop offset="1" stop-color="${sky[1]}"/></linearGradient></defs>
<rect width="640" height="360" fill="url(#s)"/><circle cx="150" cy="120" r="34" fill="#fff3c4" opacity="0.9"/>
<rect y="250" width="640" height="110" fill="${sea}"/><path d="M380 250 L640 190 L640 250 Z" fill="#2d2a32"/>
<rect x="520" y="110" width="26" height="100" fill="#f4f1ea"/><rect x="520" y="140" width="26" height="14" fill="#c0392b"/>
<rect x="520" y="176" width="26" height="14" fill="#c0392b"/><rect x="514" y="96" width="38" height="16" fill="#2d2a32"/>
${light ? '<path d="M533 104 L300 70 L300 140 Z" fill="#fff7c2" opacity="0.45"/>' : ''}
<path d="M0 300 Q160 286 320 300 T640 300" stroke="#ffffff" stroke-opacity="0.35" fill="none" stroke-width="3"/></svg>`);

async function image(name: string, svg: Buffer) {
  const file = path.join(OUT, name);
  await sharp(svg).jpeg({ quality: 72, mozjpeg: true }).toFile(file);
  return file;
}

async function render(renderer: string, inputs: ResolvedInputs, images: Record<string, string>) {
  const backend = createLocalBackends({ allowPrivateUrls: false })[renderer];
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-example-'));
  const ctx: RenderContext = {
    signal: new AbortController().signal,
    progress: () => {},
    workDir,
    timeLimitSeconds: 300,
    attemptId: `example-${renderer}`,
    // The example images stand for uploads: read from disk, never fetched.
    readUpload: async (url) =>
      images[url] ? { bytes: fs.readFileSync(images[url]), contentType: 'image/jpeg' } : null,
  };
  return { out: await backend.run(inputs, ctx), workDir };
}

/** Scales a rendered MP4 down to 320 px wide at a low bitrate: a few tens of KB. */
async function shrink(from: string, name: string) {
  const to = path.join(OUT, name);
  await run(await ffmpegPath(), [
    '-y',
    '-loglevel',
    'error',
    '-i',
    from,
    '-vf',
    'scale=320:-2',
    '-c:v',
    'libx264',
    '-preset',
    'veryslow',
    '-crf',
    '33',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '24k',
    '-ac',
    '1',
    '-movflags',
    '+faststart',
    '-map_metadata',
    '-1',
    to,
  ]);
  console.log(`${name}: ${fs.statSync(to).size} bytes`);
}

fs.mkdirSync(OUT, { recursive: true });
const dusk = await image('lighthouse-dusk.jpg', scene(['#2b3a67', '#f08a5d'], '#1f4e6b', true));
const day = await image('lighthouse-day.jpg', scene(['#7ec8e3', '#dff3fb'], '#2f7fa8', false));
const uploads = { 'example:dusk': dusk, 'example:day': day };

const i2v = await render(
  'image-to-video',
  {
    prompt: 'A slow push in on a lighthouse at dusk',
    image: 'example:dusk',
    guidance_scale: 0.5,
    duration: 5,
  },
  uploads,
);
if (i2v.out.kind === 'file') await shrink(i2v.out.path, 'image-to-video.mp4');
const se = await render(
  'start-end-to-video',
  {
    prompt: 'Day turns to dusk over the lighthouse',
    image: 'example:day',
    last_image: 'example:dusk',
    duration: 3,
    resolution: '540p',
    bgm: true,
    movement_amplitude: 'small',
  },
  uploads,
);
if (se.out.kind === 'file') await shrink(se.out.path, 'start-end-to-video.mp4');
const text = await render(
  'shot-list',
  {
    text: 'A lighthouse at dusk. Waves break on the rocks below. A ship passes slowly in the fog. The keeper climbs the stairs and lights the lamp.',
    mode: 'shot_list',
    max_items: 4,
  },
  {},
);
if (text.out.kind === 'text') console.log(`shot list:\n${text.out.text}`);
for (const r of [i2v, se, text]) fs.rmSync(r.workDir, { recursive: true, force: true });
