import type { RequestContext } from './context';
import { appAccess } from '../auth/authorize';
import type { SignerDoc } from '../data/signers-repo';
import { notFound, validationFailed, type FieldError } from '../core/errors';
import type { Platform } from '../scan';
import { actorOf, recordAudit } from './audit-service';
import { operatorSigner } from './signing-continuity';

export interface RecordSignerInput {
  package: string;
  platform?: Platform | null;
  sha256?: string | null;
  teamId?: string | null;
  reason: string;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;
// Apple team identifiers: ten upper-case letters and digits.
const TEAM_ID = /^[A-Z0-9]{10}$/;


/** The recorded signing identities of the app's packages (builds:read, or staff), by package then platform. */
export async function listSigners(ctx: RequestContext, appId: string, pkg: string | null = null): Promise<SignerDoc[]> {
  await appAccess(ctx, 'builds:read', appId, { write: false });
  return ctx.repos.signers.listForApp(appId, pkg);
}

/** The platform the input names, or the one its identity implies (a team id is Apple's, a bare digest Android's). */
function platformOf(input: RecordSignerInput): Platform {
  return input.platform ?? (input.teamId ? 'ios' : 'android');
}

function inputErrors(input: RecordSignerInput): FieldError[] {
  const errors: FieldError[] = [];
  const platform = platformOf(input);
  if (input.package.trim() === '' || input.package.length > 256 || /[\u0000-\u001f\u007f]/.test(input.package)) {
    errors.push({ pointer: '/package', message: 'must be the package name or bundle id, 1 to 256 printable characters' });
  }
  if (input.reason.trim() === '' || input.reason.length > 500) errors.push({ pointer: '/reason', message: 'must be 1 to 500 characters' });
  if (input.sha256 != null && !SHA256.test(input.sha256)) errors.push({ pointer: '/sha256', message: 'must be the certificate\'s SHA-256, 64 hex digits' });
  if (input.teamId != null && !TEAM_ID.test(input.teamId)) errors.push({ pointer: '/teamId', message: 'must be an Apple team id, 10 upper-case letters and digits' });
  if (platform === 'android') {
    if (input.sha256 == null) errors.push({ pointer: '/sha256', message: 'is required for an Android package' });
    if (input.teamId != null) errors.push({ pointer: '/teamId', message: 'is for iOS packages only' });
  } else if (input.teamId == null) {
    errors.push({ pointer: '/teamId', message: 'is required for an iOS package' });
  }
  return errors;
}

/**
 * Records a deliberate re-key (rules:write, or admin staff): the package's recorded signer becomes the given one,
 * whatever was recorded, so later packages signed by it pass the continuity check. Audited as `signer.recorded`.
 */
export async function recordSigner(ctx: RequestContext, appId: string, input: RecordSignerInput): Promise<SignerDoc> {
  await appAccess(ctx, 'rules:write', appId, { write: true });
  const errors = inputErrors(input);
  if (errors.length) throw validationFailed(errors, 'The signer cannot be recorded.');
  const platform = platformOf(input);
  const key = { appId, platform, package: input.package };
  const previous = await ctx.repos.signers.find(key);
  const observed = operatorSigner({ sha256: input.sha256?.toLowerCase() ?? null, teamId: input.teamId ?? null });
  const doc = await ctx.repos.signers.replace(key, {
    ...observed, source: 'operator', scanId: null, reason: input.reason, rotatedFrom: null, recordedAt: ctx.clock.now(),
  });
  await recordAudit(ctx, {
    appId,
    action: 'signer.recorded',
    subject: `${platform}:${input.package}`, // the trail shows which package was re-keyed; details hold both signers
    reason: input.reason,
    details: {
      platform,
      package: input.package,
      sha256: doc.sha256,
      teamId: doc.teamId,
      previousSha256: previous?.sha256 ?? null,
      previousTeamId: previous?.teamId ?? null,
    },
    actor: actorOf(ctx),
  });
  return doc;
}
