import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import { MAX_SUPPRESSIONS_PER_APP, type SuppressionDoc } from '../data/suppressions-repo';
import { notFound, validationFailed, type FieldError } from '../core/errors';
import { newId } from '../core/ids';
import { actorOf, recordAudit } from './audit-service';
import { UNSUPPRESSIBLE_FINDING_IDS } from '../scan/suppress';
import { firstOfMore, keysetConnection, pageSize, resumeAfter, type Connection, type PageArgs } from './pages';

export interface SuppressionInput {
  findingId: string;
  fingerprint?: string | null;
  reason: string;
  expiresAt: Date;
}

/** How far ahead a suppression may expire: an accepted risk is looked at again within a year (366: a leap year). */
export const MAX_SUPPRESSION_DAYS = 366;
export const MAX_REASON_LENGTH = 500;
const RULE_ID = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const FINGERPRINT = /^[0-9a-f]{64}$/;
const DAY_MS = 86_400_000;

export type SuppressionStatus = 'active' | 'expired';

export function suppressionStatus(doc: Pick<SuppressionDoc, 'expiresAt'>, now: Date): SuppressionStatus {
  return doc.expiresAt > now ? 'active' : 'expired';
}

function inputErrors(input: SuppressionInput, now: Date): FieldError[] {
  const errors: FieldError[] = [];
  if (!RULE_ID.test(input.findingId)) errors.push({ pointer: '/findingId', message: 'must be a rule id such as android.allow-backup' });
  else if (UNSUPPRESSIBLE_FINDING_IDS.has(input.findingId)) {
    errors.push({ pointer: '/findingId', message: `${input.findingId} cannot be suppressed: a package signed by someone else, or one not analysed, is never an accepted risk` });
  }
  if (input.fingerprint != null && !FINGERPRINT.test(input.fingerprint)) errors.push({ pointer: '/fingerprint', message: 'must be 64 lowercase hex characters, as a finding lists it' });
  if (input.reason.trim().length < 1 || input.reason.length > MAX_REASON_LENGTH) errors.push({ pointer: '/reason', message: `must be 1 to ${MAX_REASON_LENGTH} characters` });
  const at = input.expiresAt.getTime();
  if (!Number.isFinite(at) || at <= now.getTime()) errors.push({ pointer: '/expiresAt', message: 'must be in the future' });
  else if (at > now.getTime() + MAX_SUPPRESSION_DAYS * DAY_MS) errors.push({ pointer: '/expiresAt', message: `must be at most ${MAX_SUPPRESSION_DAYS} days ahead` });
  return errors;
}

/** The audit subject: the suppression and the finding it names (the rule, and its one instance when given). */
function auditSubject(doc: SuppressionDoc): string {
  return `${doc._id} ${doc.findingId}${doc.fingerprint ? ` ${doc.fingerprint}` : ''}`;
}

/** Accepts a finding until a date (rules:write, or admin staff). Audited as suppression.created. */
export async function createSuppression(ctx: RequestContext, appId: string, input: SuppressionInput): Promise<SuppressionDoc> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const now = ctx.clock.now();
  const errors = inputErrors(input, now);
  if (errors.length) throw validationFailed(errors, 'The suppression is not allowed.');
  const doc = await ctx.repos.suppressions.insertIfRoom({
    _id: newId('sup'),
    appId,
    findingId: input.findingId,
    fingerprint: input.fingerprint ?? null,
    reason: input.reason,
    expiresAt: input.expiresAt,
    createdBy: actorOf(ctx),
    createdAt: now,
  });
  if (!doc) throw validationFailed([{ pointer: '', message: `an app has at most ${MAX_SUPPRESSIONS_PER_APP} suppressions; delete expired ones` }], 'The app has too many suppressions.');
  await recordAudit(ctx, {
    appId,
    action: 'suppression.created',
    subject: auditSubject(doc),
    reason: doc.reason,
    actor: doc.createdBy,
    details: { suppressionId: doc._id, findingId: doc.findingId, fingerprint: doc.fingerprint, expiresAt: doc.expiresAt.toISOString() },
  });
  return doc;
}

/** Deletes a suppression (rules:write, or admin staff): later scans count its findings again. Audited as suppression.deleted. */
export async function deleteSuppression(ctx: RequestContext, appId: string, suppressionId: string): Promise<void> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const deleted = await ctx.repos.suppressions.deleteForApp(appId, suppressionId);
  if (!deleted) throw notFound('Suppression');
  await recordAudit(ctx, {
    appId,
    action: 'suppression.deleted',
    subject: auditSubject(deleted),
    reason: deleted.reason,
    actor: actorOf(ctx),
    details: { suppressionId: deleted._id, findingId: deleted.findingId, fingerprint: deleted.fingerprint, expiresAt: deleted.expiresAt.toISOString() },
  });
}

/** The app's suppressions, newest first (rules:read, or staff). */
export async function suppressionsConnection(ctx: RequestContext, appId: string, args: PageArgs): Promise<Connection<SuppressionDoc>> {
  await appAccess(ctx, 'rules:read', appId, { write: false });
  const size = pageSize(args.first);
  const kind = 'connection:suppressions';
  const bound = { appId };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.suppressions.page(appId, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.suppressions.count(appId));
}
