import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { connectionArgs, toRestPage } from '../support/rest-page';
import { notFound } from '../../src/core/errors';
import { CreateSuppressionDocument, DeleteSuppressionDocument, SuppressionsDocument, type SuppressionFieldsFragment } from '../../src/generated/rest-operations';
import type { components } from '../../src/generated/openapi';
import { contractMember } from '../support/contract-values';

type RestSuppression = components['schemas']['Suppression'];

const iso = (value: Date | string) => new Date(value).toISOString();

/** GraphQL's DateTimes and String status -> the contract's. */
function toRest(s: SuppressionFieldsFragment): RestSuppression {
  return { ...s, fingerprint: s.fingerprint ?? null, status: contractMember('Suppression', 'status', s.status), expiresAt: iso(s.expiresAt), createdAt: iso(s.createdAt) };
}

export const createSuppression: RestHandler<'createSuppression'> = async (call, ctx) => {
  const { findingId, fingerprint, reason, expiresAt } = call.body;
  const input = { findingId, fingerprint: fingerprint ?? null, reason, expiresAt };
  const { createSuppression } = await execute(ctx, CreateSuppressionDocument, { appId: call.params.id, input });
  call.answer(201, toRest(createSuppression));
};

export const listSuppressions: RestHandler<'listSuppressions'> = async (call, ctx) => {
  const { app } = await execute(ctx, SuppressionsDocument, { appId: call.params.id, ...connectionArgs(call.query) });
  if (!app) throw notFound('App');
  call.answer(200, toRestPage(app.suppressions, toRest));
};

export const deleteSuppression: RestHandler<'deleteSuppression'> = async (call, ctx) => {
  await execute(ctx, DeleteSuppressionDocument, { appId: call.params.id, suppressionId: call.params.suppressionId });
  call.res.status(204).end();
};
