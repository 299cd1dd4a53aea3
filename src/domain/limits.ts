// Limits on input images, shared by the uploads (services/uploads.ts, checked at upload) and the
// renderers that fetch or decode them (backends/local/fetch-image.ts): an upload accepted here is
// one the renderers accept.

/** The most pixels an input image may have (width × height), decoded. */
export const MAX_INPUT_PIXELS = 40_000_000;

/**
 * The highest rate limit a key can have, per minute: the operator (admin API, CLI) may set any rate up
 * to it (docs/api.md "Abuse limits"); it is the range of the column that holds it.
 */
export const MAX_KEY_RATE_PER_MINUTE = 2_147_483_647;
