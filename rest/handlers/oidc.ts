import type { Handler } from '../handler';
import { execute, gqlDocument } from '../execute';
import { pathParams, queryParams } from '../request';
import type {
  AuditPage,
  CreateOidcRuleInput,
  MutationCreateOidcRuleArgs,
  MutationDeleteOidcRuleArgs,
  MutationExchangeOidcTokenArgs,
  OidcExchange,
  OidcDryRun,
  OidcRule,
  QueryAuditEventsArgs,
  QueryDryRunOidcRulesArgs,
  QueryOidcRulesArgs,
} from '../../src/generated/graphql';

const EXCHANGE = gqlDocument<{ exchangeOidcToken: OidcExchange }, MutationExchangeOidcTokenArgs>(
  `mutation ExchangeOidcToken($token: String!, $appId: ID!) {
    exchangeOidcToken(token: $token, appId: $appId) { accessToken tokenType expiresIn scopes appId }
  }`,
);

const RULE_FIELDS = 'id appId subjectPattern workflowRef environment scopes repositoryId repositoryOwnerId events createdAt';

const CREATE_RULE = gqlDocument<{ createOidcRule: OidcRule }, MutationCreateOidcRuleArgs>(
  `mutation CreateOidcRule($appId: ID!, $input: CreateOidcRuleInput!) { createOidcRule(appId: $appId, input: $input) { ${RULE_FIELDS} } }`,
);

const LIST_RULES = gqlDocument<{ oidcRules: OidcRule[] }, QueryOidcRulesArgs>(`query OidcRules($appId: ID!) { oidcRules(appId: $appId) { ${RULE_FIELDS} } }`);

const DELETE_RULE = gqlDocument<{ deleteOidcRule: boolean }, MutationDeleteOidcRuleArgs>(
  `mutation DeleteOidcRule($appId: ID!, $ruleId: ID!) { deleteOidcRule(appId: $appId, ruleId: $ruleId) }`,
);

export const exchangeOidcToken: Handler = async (req, res, ctx) => {
  // Validated against the contract (shape and length) but untrusted until the exchange verifies the token.
  const unverified = req.body as { token: string; appId: string };
  const { exchangeOidcToken } = await execute(ctx, EXCHANGE, { token: unverified.token, appId: unverified.appId });
  res.setHeader('Cache-Control', 'no-store'); // a credential: no cache may keep it
  res.status(200).json(exchangeOidcToken);
};

export const createOidcRule: Handler = async (req, res, ctx) => {
  const body = req.body as CreateOidcRuleInput;
  const input: CreateOidcRuleInput = {
    subjectPattern: body.subjectPattern,
    workflowRef: body.workflowRef ?? null,
    environment: body.environment ?? null,
    scopes: body.scopes,
    repositoryId: body.repositoryId ?? null,
    repositoryOwnerId: body.repositoryOwnerId ?? null,
    events: body.events ?? null,
  };
  const { createOidcRule } = await execute(ctx, CREATE_RULE, { appId: pathParams(req).id, input });
  res.status(201).json(createOidcRule);
};

export const listOidcRules: Handler = async (req, res, ctx) => {
  const { oidcRules } = await execute(ctx, LIST_RULES, { appId: pathParams(req).id });
  res.status(200).json({ data: oidcRules });
};

export const deleteOidcRule: Handler = async (req, res, ctx) => {
  const params = pathParams(req);
  await execute(ctx, DELETE_RULE, { appId: params.id, ruleId: params.ruleId });
  res.status(204).end();
};

const AUDIT_EVENTS = gqlDocument<{ auditEvents: AuditPage }, QueryAuditEventsArgs>(
  `query AuditEvents($appId: ID!, $action: String, $limit: Int, $cursor: String) {
    auditEvents(appId: $appId, action: $action, limit: $limit, cursor: $cursor) {
      data {
        id action occurredAt subject reason ruleId count
        claims { sub repository repository_id repository_owner_id ref environment event_name job_workflow_ref }
        rules { id matched failed { check expected actual } }
      }
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


const DRY_RUN = gqlDocument<{ dryRunOidcRules: OidcDryRun }, QueryDryRunOidcRulesArgs>(
  `query DryRunOidcRules($appId: ID!, $claims: [ClaimInput!]!) {
    dryRunOidcRules(appId: $appId, claims: $claims) { matches scopes reason rules { id matched failed { check expected actual } } }
  }`,
);

/** A claim's value as the evaluator reads it: strings as they are, anything else as its JSON text. */
const claimValue = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export const dryRunOidcRules: Handler = async (req, res, ctx) => {
  // Every member is passed on, whatever its type, so the service sees (and refuses) a token pasted anywhere in it.
  const { claims } = req.body as { claims: Record<string, unknown> };
  const pairs = Object.entries(claims).map(([name, value]) => ({ name, value: claimValue(value) }));
  const { dryRunOidcRules } = await execute(ctx, DRY_RUN, { appId: pathParams(req).id, claims: pairs });
  res.status(200).json(dryRunOidcRules);
};
