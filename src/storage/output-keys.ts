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
