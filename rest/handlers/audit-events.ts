import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { connectionArgs, toRestPage } from '../support/rest-page';
import { notFound } from '../../src/core/errors';
import { AuditEventsDocument } from '../../src/generated/rest-operations';
import { contractValue } from '../support/contract-values';
import { toRestRuleOutcome } from '../support/rule-outcomes';

export const listAuditEvents: RestHandler<'listAuditEvents'> = async (call, ctx) => {
  const { query } = call;
  const { app } = await execute(ctx, AuditEventsDocument, { appId: call.params.id, action: query.action ?? null, ...connectionArgs(query) });
  if (!app) throw notFound('App');
  call.answer(
    200,
    toRestPage(app.auditEvents, (event) => ({
      ...event,
      action: contractValue('AuditAction', event.action),
      rules: event.rules && event.rules.map(toRestRuleOutcome),
      // Under the provider's own names (GitHub's eight for a GitHub token).
      claims: event.claims && Object.fromEntries(event.claims.all.map(({ name, value }) => [name, value])),
    })),
  );
};
