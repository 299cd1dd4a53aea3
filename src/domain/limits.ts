// Limits on input images, shared by the uploads (services/uploads.ts, checked at upload) and the
// renderers that fetch or decode them (backends/local/fetch-image.ts): an upload accepted here is one
// the renderers accept.

/** The most pixels an input image may have (width × height), decoded. */
export const MAX_INPUT_PIXELS = 40_000_000;
