// Where a render's output is stored: each attempt writes its own key, so a losing attempt removes
// only its own file (queue/worker.ts, db/lease.ts on attempts).

/** The extensions an output key can have, by its content type. */
const OUTPUT_EXTENSIONS = ['mp4', 'bin'] as const;
const outputExtension = (contentType: string) => (contentType === 'video/mp4' ? 'mp4' : 'bin');
const outputKey = (generationId: string, attempt: number, ext: string) =>
  `generations/${generationId}-${attempt}.${ext}`;

/** The storage key of an attempt's output file. */
export function attemptOutputKey(
  generationId: string,
  attempt: number,
  contentType: string,
): string {
  return outputKey(generationId, attempt, outputExtension(contentType));
}

/** Every key attempts 1 to `before - 1` of a generation could have stored its output under. */
export function earlierAttemptOutputKeys(generationId: string, before: number): string[] {
  const keys = [];
  for (let attempt = 1; attempt < before; attempt++) {
    for (const ext of OUTPUT_EXTENSIONS) keys.push(outputKey(generationId, attempt, ext));
  }
  return keys;
}

/** Where the still of a video output is kept (queue/poster.ts): `posters/<id>-<attempt>.jpg`. */
export function posterKey(outputKey: string): string {
  const m = /^generations\/(gen_[0-9a-f]{32}-\d+)\.[a-z0-9]+$/.exec(outputKey);
  if (!m) throw new Error(`not an output key: ${outputKey}`);
  return `posters/${m[1]}.jpg`;
}

/** A poster's key, `posters/<id>-<attempt>.jpg`: the id and attempt, else null. */
export function posterOwner(key: string): { generationId: string; attempt: number } | null {
  const m = /^posters\/(gen_[0-9a-f]{32})-(\d+)\.jpg$/.exec(key);
  return m ? { generationId: m[1], attempt: Number(m[2]) } : null;
}

/** The keys a poster's output could have (one per extension). */
export function posterOutputKeys(generationId: string, attempt: number): string[] {
  return OUTPUT_EXTENSIONS.map((ext) => outputKey(generationId, attempt, ext));
}
