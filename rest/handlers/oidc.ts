import type { Handler } from '../handler';
import { DomainError } from '../../src/errors';
import { execute, gqlDocument } from '../execute';
import { pathParams, queryParams } from '../request';
import type { AuditPage, QueryAuditEventsArgs } from '../../src/generated/graphql';

export const exchangeOidcToken: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const createOidcRule: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const listOidcRules: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const deleteOidcRule: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

const AUDIT_EVENTS = gqlDocument<{ auditEvents: AuditPage }, QueryAuditEventsArgs>(
  `query AuditEvents($appId: ID!, $action: String, $limit: Int, $cursor: String) {
    auditEvents(appId: $appId, action: $action, limit: $limit, cursor: $cursor) {
      data { id action occurredAt subject reason ruleId }
      hasMore
      nextCursor
    }
  }`,
);

export const listAuditEvents: Handler = async (req, res, ctx) => {
  const query = queryParams<{ limit?: number; cursor?: string; action?: string }>(req);
  const { auditEvents } = await execute(ctx, AUDIT_EVENTS, {
    appId: pathParams(req).id,
    action: query.action ?? null,
    limit: query.limit ?? 25,
    cursor: query.cursor ?? null,
  });
  res.status(200).json(auditEvents);
};

