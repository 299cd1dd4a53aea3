// What-if measure (node --import tsx bench/whatif/decode-cost.ts): the CPU an upload's image checks
// take (src/services/upload-image.ts: the header, then every row), by format and size, in ns a pixel:
// where upload-turns.ts's DECODE_NS_PER_PIXEL comes from. Images of smoothed noise, like photos (pure
// noise makes PNG store its rows uncompressed, which decodes faster than anything a camera makes).
// Process CPU, all threads; one image at a time.
import crypto from 'node:crypto';
import sharp from 'sharp';
import { decodeRows, readHeader } from '../../src/services/upload-image.ts';
import { DECODE_NS_PER_PIXEL, decodeTurns } from '../../src/admission/upload-turns.ts';

const check = async (body: Buffer, format: string) =>
  decodeRows(await readHeader(body, format, format), format);

for (const [w, h] of [
  [200, 200],
  [1000, 1000],
  [4000, 3000],
]) {
  const photo = sharp(crypto.randomBytes(w * h * 3), { raw: { width: w, height: h, channels: 3 } })
    .blur(3)
    .toFormat('png');
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    const body = await photo.clone().toFormat(format).toBuffer();
    await check(body, format);
    const n = w * h > 2e6 ? 3 : 30;
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await check(body, format);
    const c = process.cpuUsage(c0);
    const ms = (c.user + c.system) / 1000 / n;
    console.log(
      `${w}×${h} ${format}: ${(body.length / 1e6).toFixed(2)} MB, ${ms.toFixed(1)} ms of CPU, ` +
        `${((ms * 1e6) / (w * h)).toFixed(1)} ns a pixel (estimated ${DECODE_NS_PER_PIXEL[format]}); ` +
        `${decodeTurns(format, w * h).toFixed(1)} turns`,
    );
  }
}
