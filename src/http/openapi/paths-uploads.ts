// The operations of /v1/uploads (docs/api.md).
import { header, RATE, op, ok, ID, LIST } from './operation.ts';

export function uploadPaths() {
  return {
    '/v1/uploads': {
      post: op(
        {
          id: 'createUpload',
          tag: 'Uploads',
          summary: 'Upload an image to use as a `url` input.',
          body: {
            required: true,
            content: Object.fromEntries(
              ['image/png', 'image/jpeg', 'image/webp'].map((t) => [
                t,
                { schema: { type: 'string', contentMediaType: t } },
              ]),
            ),
          },
          ok: ok(
            'Stored.',
            'Upload',
            { Location: { description: "The upload's url.", schema: { type: 'string' } } },
            '201',
          ),
          description:
            'Live uploads of an account (not deleted, not expired) are bounded in bytes and number; past either, 409 `UPLOAD_QUOTA_EXCEEDED` with the usage and the quota in `details`.',
          errors: [409, 507],
        },
        'post',
      ),
      get: op(
        {
          id: 'listUploads',
          tag: 'Uploads',
          summary: "The account's live uploads (not deleted, not expired), newest first.",
          params: LIST,
          ok: ok('A page of uploads.', 'UploadList'),
        },
        'get',
      ),
    },
    '/v1/uploads/{id}': {
      get: op(
        {
          id: 'getUpload',
          tag: 'Uploads',
          summary: "The uploaded bytes, with the upload's Content-Type.",
          params: [ID],
          ok: {
            200: {
              description: 'The image.',
              headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE },
              content: Object.fromEntries(
                ['image/png', 'image/jpeg', 'image/webp'].map((t) => [
                  t,
                  { schema: { type: 'string', contentMediaType: t } },
                ]),
              ),
            },
          },
          errors: [404],
        },
        'get',
      ),
      delete: op(
        {
          id: 'deleteUpload',
          tag: 'Uploads',
          summary: 'Remove an upload.',
          params: [ID],
          ok: ok('Deleted.', 'Deleted'),
          errors: [404],
        },
        'delete',
      ),
    },
  };
}
