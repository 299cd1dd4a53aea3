// The admin document's part on members (docs/api.md "Teams: members and roles"): its paths and
// schemas, spread into admin-document.ts, which hands over its helpers.
import type { AdminHelpers } from './admin-helpers.ts';
import { ROLES } from '../../domain/principal.ts';

type Helpers = AdminHelpers;

const str = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
const ID = { name: 'id', in: 'path', required: true, schema: str };
const USER = { name: 'userId', in: 'path', required: true, schema: str };
const role = { enum: [...ROLES] };

export function memberPaths({ op, body }: Helpers) {
  return {
    '/accounts/{id}/members': {
      get: op(
        'listMembers',
        "The account's members.",
        '200',
        'MemberList',
        { parameters: [ID] },
        [404],
      ),
      post: op(
        'addMember',
        'Add a known person at once, or invite a new one by a one-time link (7 days).',
        '201',
        'MemberAdded',
        { parameters: [ID], requestBody: body('MemberCreate') },
        [404],
      ),
    },
    '/accounts/{id}/members/{userId}': {
      patch: op(
        'changeMemberRole',
        "Change a member's role; never leaving the account without an owner (409 LAST_OWNER).",
        '200',
        'Member',
        { parameters: [ID, USER], requestBody: body('MemberUpdate') },
        [404, 409],
      ),
      delete: op(
        'removeMember',
        'Remove a member: their sessions in the account end; `revokeKeys=true` revokes the ' +
          'keys they created. Never the last owner (409 LAST_OWNER).',
        '200',
        'MemberRemoved',
        {
          parameters: [
            ID,
            USER,
            { name: 'revokeKeys', in: 'query', schema: { enum: ['true', 'false'] } },
          ],
        },
        [404, 409],
      ),
    },
  };
}

export function memberSchemas({ ref, obj }: Helpers) {
  return {
    Member: obj(['userId', 'email', 'role', 'joinedAt'], {
      userId: str,
      email: str,
      role,
      joinedAt: time,
    }),
    MemberList: obj(['data'], { data: { type: 'array', items: ref('Member') } }),
    MemberCreate: obj(['email', 'role'], { email: { ...str, maxLength: 254 }, role }),
    MemberUpdate: obj(['role'], { role }),
    MemberAdded: obj(['status', 'userId', 'email', 'role', 'link', 'expiresAt', 'mailed'], {
      status: { enum: ['added', 'invited'] },
      userId: { type: ['string', 'null'], description: 'null for an invited person.' },
      email: str,
      role,
      link: { type: ['string', 'null'], description: 'The invite link (null when added).' },
      expiresAt: { type: ['string', 'null'], format: 'date-time' },
      mailed: {
        type: 'boolean',
        description:
          'Whether the link went out by mail (false: no mail server set up, or it refused the mail).',
      },
    }),
    MemberRemoved: obj(['userId', 'removed', 'revokedKeys'], {
      userId: str,
      removed: { const: true },
      revokedKeys: { type: 'array', items: str },
    }),
  };
}
