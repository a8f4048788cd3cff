import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { toRestPage } from '../support/rest-page';
import { notFound } from '../../src/core/errors';
import { MAX_RULES_PER_APP } from '../../src/data/oidc-rules-repo';
import {
  CreateOidcRuleDocument,
  DeleteOidcRuleDocument,
  DryRunOidcRulesDocument,
  OidcRulesDocument,
  type CreateOidcRuleInput,
  type OidcRuleFieldsFragment,
} from '../../src/generated/rest-operations';
import type { components } from '../../src/generated/openapi';
import { contractValue, contractValues } from '../support/contract-values';
import { toRestRuleOutcome } from '../support/rule-outcomes';

type RestOidcRule = components['schemas']['OidcRule'];

/** GraphQL's String scopes and provider -> the values the contract lists. */
const toRestRule = (rule: OidcRuleFieldsFragment): RestOidcRule => ({
  ...rule,
  provider: contractValue('CiProvider', rule.provider),
  scopes: contractValues('CiScope', rule.scopes),
});

export const createOidcRule: RestHandler<'createOidcRule'> = async (call, ctx) => {
  const body = call.body;
  // Every member as sent (the contract refuses unknown ones); the service judges them per provider.
  const input: CreateOidcRuleInput = {
    provider: body.provider ?? null,
    issuer: body.issuer ?? null,
    subjectPattern: body.subjectPattern ?? null,
    workflowRef: body.workflowRef ?? null,
    environment: body.environment ?? null,
    scopes: body.scopes,
    repositoryId: body.repositoryId ?? null,
    repositoryOwnerId: body.repositoryOwnerId ?? null,
    events: body.events ?? null,
    releaseBuilds: body.releaseBuilds ?? false,
    namespaceId: body.namespaceId ?? null,
    projectId: body.projectId ?? null,
    configRef: body.configRef ?? null,
    protectedRefOnly: body.protectedRefOnly ?? null,
    organizationSlug: body.organizationSlug ?? null,
    pipelineSlug: body.pipelineSlug ?? null,
    branch: body.branch ?? null,
    contextIds: body.contextIds ?? null,
    vcsOrigin: body.vcsOrigin ?? null,
    organizationId: body.organizationId ?? null,
    workspaceUuid: body.workspaceUuid ?? null,
    repositoryUuid: body.repositoryUuid ?? null,
    deploymentEnvironmentUuid: body.deploymentEnvironmentUuid ?? null,
  };
  const { createOidcRule } = await execute(ctx, CreateOidcRuleDocument, { appId: call.params.id, input });
  call.answer(201, toRestRule(createOidcRule));
};

/**
 * Every rule of the app, oldest first as the contract lists them (the order the exchange tries them in): the
 * connection pages newest first, and one page holds them all (an app has at most MAX_RULES_PER_APP).
 */
export const listOidcRules: RestHandler<'listOidcRules'> = async (call, ctx) => {
  const { app } = await execute(ctx, OidcRulesDocument, { appId: call.params.id, first: MAX_RULES_PER_APP });
  if (!app) throw notFound('App');
  const page = toRestPage(app.oidcRules, toRestRule);
  if (page.hasMore) throw new Error(`app ${call.params.id} holds more than ${MAX_RULES_PER_APP} trust rules`);
  call.answer(200, { data: page.data.reverse() });
};

export const deleteOidcRule: RestHandler<'deleteOidcRule'> = async (call, ctx) => {
  await execute(ctx, DeleteOidcRuleDocument, { appId: call.params.id, ruleId: call.params.ruleId });
  call.res.status(204).end();
};

/** A claim's value as the evaluator reads it: strings as they are, anything else as its JSON text. */
const claimValue = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export const dryRunOidcRules: RestHandler<'dryRunOidcRules'> = async (call, ctx) => {
  // Every member is passed on, whatever its type, so the service sees (and refuses) a token pasted anywhere in it;
  // a null member is a claim the token does not carry (Buildkite writes `"build_tag": null`).
  const pairs = Object.entries(call.body.claims)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => ({ name, value: claimValue(value) }));
  const { dryRunOidcRules } = await execute(ctx, DryRunOidcRulesDocument, { appId: call.params.id, claims: pairs });
  call.answer(200, {
    ...dryRunOidcRules,
    scopes: contractValues('CiScope', dryRunOidcRules.scopes),
    rules: dryRunOidcRules.rules.map(toRestRuleOutcome),
  });
};
