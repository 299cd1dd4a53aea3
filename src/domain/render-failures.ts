// The closed list of a generation's failure codes (`error.code` of a failed, refunded or cancelled
// render), each with what it means in words (the studio shows it before the service's own message).
// The API's request errors are another list (errors.ts): these describe a render, not a request.
// docs/api.md "Failure codes" is this table; a render can only fail with a code named here.
export const RENDER_FAILURES = {
  // the inputs
  INPUT_URL_REFUSED: 'An input address is not allowed (private, local or not http/https)',
  INPUT_NOT_FOUND: 'An input could not be found at its address',
  INPUT_FETCH_FAILED: 'An input could not be fetched',
  INPUT_FETCH_TIMEOUT: 'An input took too long to fetch',
  INPUT_BAD_RESPONSE: "An input's server sent an invalid answer",
  INPUT_TLS_INVALID: "An input's server has an invalid certificate",
  INPUT_TOO_MANY_REDIRECTS: 'An input address redirected too many times',
  INPUT_TOO_LARGE: 'An input is larger than allowed',
  INPUT_NOT_IMAGE: 'An input is not an image that can be used',
  INPUT_UPLOAD_GONE: 'An uploaded input was deleted or expired before the render used it',
  RENDER_INPUT_INVALID: 'An input could not be used',
  RENDER_INPUT_TOO_COMPLEX: 'The input is too complex for the model to finish in time',
  MODEL_INPUT_REJECTED: 'The model server refused the input',
  // the model and its server
  MODEL_FAILED: 'The model could not make this render',
  MODEL_UNAVAILABLE: 'The model is no longer offered',
  BACKEND_BUSY: 'The model server was too busy',
  BACKEND_UNAVAILABLE: 'The model server failed',
  BACKEND_UNREACHABLE: 'The model server could not be reached',
  BACKEND_TIMEOUT: 'The model server did not answer in time',
  BACKEND_BAD_RESPONSE: 'The model server sent an answer that could not be used',
  BACKEND_REJECTED: 'The model server refused the request',
  BACKEND_CANCELLED: 'The model server cancelled the render',
  RENDERER_FAILED: 'The built-in renderer failed',
  // the output
  OUTPUT_TOO_LARGE: "The model's output is larger than allowed",
  OUTPUT_WRONG_TYPE: "The model's output is not of the model's type",
  STORAGE_FAILED: 'The output could not be stored',
  // the render's own course
  RENDER_TIMEOUT: 'The render took longer than the model allows',
  RENDER_DEADLINE_EXCEEDED: 'The render did not finish by its deadline',
  RENDER_ABANDONED: 'The render kept stopping its worker and was given up',
  RENDER_ABORTED: 'The render was stopped',
  RENDER_CANCELLED: 'The render was cancelled',
  RENDER_FAILED: 'The render failed unexpectedly',
  // by a person
  CANCELLED: 'The render was cancelled by its owner',
  REFUNDED_BY_OPERATOR: 'The operator returned its charge',
} as const;

export type RenderFailureCode = keyof typeof RENDER_FAILURES;

export function isRenderFailureCode(code: unknown): code is RenderFailureCode {
  return typeof code === 'string' && Object.hasOwn(RENDER_FAILURES, code);
}
