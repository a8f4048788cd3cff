import type { Handler } from '../handler';
import { execute } from '../support/execute';
import { connectionArgs, toRestPage } from '../support/rest-page';
import { notFound } from '../../src/core/errors';
import { pathParams, queryParams } from '../support/request';
import {
  AuditEventsDocument,
  CreateOidcRuleDocument,
  DeleteOidcRuleDocument,
  DryRunOidcRulesDocument,
  ExchangeOidcTokenDocument,
  OidcRulesDocument,
  type CreateOidcRuleInput,
} from '../../src/generated/rest-operations';

export const exchangeOidcToken: Handler = async (req, res, ctx) => {
  // Validated against the contract (shape and length) but untrusted until the exchange verifies the token.
  const unverified = req.body as { token: string; appId: string };
  const { exchangeOidcToken } = await execute(ctx, ExchangeOidcTokenDocument, { token: unverified.token, appId: unverified.appId });
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
  const { createOidcRule } = await execute(ctx, CreateOidcRuleDocument, { appId: pathParams(req).id, input });
  res.status(201).json(createOidcRule);
};

export const listOidcRules: Handler = async (req, res, ctx) => {
  const { oidcRules } = await execute(ctx, OidcRulesDocument, { appId: pathParams(req).id });
  res.status(200).json({ data: oidcRules });
};

export const deleteOidcRule: Handler = async (req, res, ctx) => {
  const params = pathParams(req);
  await execute(ctx, DeleteOidcRuleDocument, { appId: params.id, ruleId: params.ruleId });
  res.status(204).end();
};

export const listAuditEvents: Handler = async (req, res, ctx) => {
  const query = queryParams<{ limit?: number; cursor?: string; action?: string }>(req);
  const { app } = await execute(ctx, AuditEventsDocument, { appId: pathParams(req).id, action: query.action ?? null, ...connectionArgs(query) });
  if (!app) throw notFound('App');
  res.status(200).json(toRestPage(app.auditEvents, (event) => event));
};

/** A claim's value as the evaluator reads it: strings as they are, anything else as its JSON text. */
const claimValue = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export const dryRunOidcRules: Handler = async (req, res, ctx) => {
  // Every member is passed on, whatever its type, so the service sees (and refuses) a token pasted anywhere in it.
  const { claims } = req.body as { claims: Record<string, unknown> };
  const pairs = Object.entries(claims).map(([name, value]) => ({ name, value: claimValue(value) }));
  const { dryRunOidcRules } = await execute(ctx, DryRunOidcRulesDocument, { appId: pathParams(req).id, claims: pairs });
  res.status(200).json(dryRunOidcRules);
};
