import { parseArgs } from 'node:util';
import type { Deps } from '../core/deps';
import { createApp, listApps } from '../services/apps-service';
import { createApiKey, createStaff, listApiKeys, listStaff, revokeApiKey, revokeStaff } from '../services/keys-service';
import { recordAction } from '../services/audit-service';
import { parseDuration } from './duration';
import { operatorContext } from '../services/operator-context';

export const USAGE = `usage: shieldgate [--data-dir DIR] COMMAND   (--data-dir: the service's DATA_DIR; or a database of its own there)
  shieldgate --help
  shieldgate app list [--limit N]
  shieldgate app create --name NAME --plan PLAN [--org ORG]
  shieldgate key create --app APP_ID --scopes s1,s2 [--test] [--name NAME] [--release-builds]
  shieldgate key list --app APP_ID
  shieldgate key revoke KEY_ID
  shieldgate staff create --role support|admin [--name NAME] [--ttl DURATION]   (DURATION: 3600, 90m, 12h, 7d; default 12h)
  shieldgate staff list
  shieldgate staff revoke STAFF_ID
  shieldgate signing-key rotate [--revoke-previous]
  shieldgate attest-key rotate [--revoke-previous]   (the key of attestation verdict tokens)
  shieldgate audit [--app APP_ID] [--limit N]`;

export class UsageError extends Error {}

export type Command = (deps: Deps, args: string[]) => Promise<unknown>;

function options(args: string[], spec: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** --limit N: 50 when absent, else an integer from 1 to max. */
function limitOf(value: string | boolean | undefined, max: number): number {
  const limit = value === undefined ? 50 : Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new UsageError(`--limit must be an integer from 1 to ${max}`);
  return limit;
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

export const commands: Record<string, Command> = {
  'app create': async (deps, args) => {
    const { values } = options(args, { name: { type: 'string' }, plan: { type: 'string' }, org: { type: 'string' } });
    const app = await createApp(operatorContext(deps), { name: required(values.name, 'name'), plan: required(values.plan, 'plan'), org: values.org as string | undefined });
    return { id: app._id, name: app.name, plan: app.plan, org: app.org };
  },
  'app list': async (deps, args) => {
    const { values } = options(args, { limit: { type: 'string' } });
    const apps = await listApps(operatorContext(deps), limitOf(values.limit, 200));
    return { data: apps.map((a) => ({ id: a._id, name: a.name, plan: a.plan, org: a.org, createdAt: a.createdAt })) };
  },
  'key list': async (deps, args) => {
    const { values } = options(args, { app: { type: 'string' } });
    const keys = await listApiKeys(operatorContext(deps), required(values.app, 'app'));
    // Never the secret's hash: the id, what the key may do and its dates.
    return { data: keys.map((k) => ({ id: k._id, appId: k.appId, name: k.name, scopes: k.scopes, mode: k.mode, releaseBuilds: k.releaseBuilds ?? false, createdAt: k.createdAt, expiresAt: k.expiresAt, revokedAt: k.revokedAt })) };
  },
  'key create': async (deps, args) => {
    const { values } = options(args, { app: { type: 'string' }, scopes: { type: 'string' }, test: { type: 'boolean' }, name: { type: 'string' }, 'release-builds': { type: 'boolean' } });
    const scopes = required(values.scopes, 'scopes').split(',').map((s) => s.trim()).filter(Boolean);
    const created = await createApiKey(operatorContext(deps), { appId: required(values.app, 'app'), scopes, mode: values.test ? 'test' : 'live', name: values.name as string | undefined, releaseBuilds: values['release-builds'] === true });
    return { id: created.doc._id, key: created.key, appId: created.doc.appId, scopes: created.doc.scopes, mode: created.doc.mode, releaseBuilds: created.doc.releaseBuilds ?? false };
  },
  'key revoke': async (deps, args) => {
    const { positionals } = options(args, {});
    if (positionals.length !== 1) throw new UsageError('key revoke takes one KEY_ID');
    const doc = await revokeApiKey(operatorContext(deps), positionals[0]);
    return { id: doc._id, revokedAt: doc.revokedAt };
  },
  'staff create': async (deps, args) => {
    const { values } = options(args, { role: { type: 'string' }, name: { type: 'string' }, ttl: { type: 'string' } });
    let ttlMs: number | undefined;
    if (values.ttl !== undefined) {
      const parsed = parseDuration(String(values.ttl));
      if (parsed === null) throw new UsageError('--ttl must be seconds, or a number with s, m, h or d (for example 90m, 12h, 7d)');
      ttlMs = parsed;
    }
    const created = await createStaff(operatorContext(deps), required(values.role, 'role'), values.name as string | undefined, { ttlMs });
    return { id: created.id, token: created.token, expiresAt: created.expiresAt };
  },
  'staff list': async (deps, args) => {
    options(args, {});
    return { data: await listStaff(operatorContext(deps)) };
  },
  'staff revoke': async (deps, args) => {
    const { positionals } = options(args, {});
    if (positionals.length !== 1) throw new UsageError('staff revoke takes one STAFF_ID');
    const doc = await revokeStaff(operatorContext(deps), positionals[0]);
    return { id: doc.id, revokedAt: doc.revokedAt };
  },
  'signing-key rotate': async (deps, args) => {
    const { values } = options(args, { 'revoke-previous': { type: 'boolean' } });
    const { kid, revoked } = await deps.signingKeys.rotate({ revokePrevious: Boolean(values['revoke-previous']) });
    await recordAction(operatorContext(deps), { action: 'signing_key.rotated', resource: `signing_key:${kid}`, details: { revokedPrevious: revoked } });
    return { kid, revokedPrevious: revoked };
  },
  'attest-key rotate': async (deps, args) => {
    const { values } = options(args, { 'revoke-previous': { type: 'boolean' } });
    const { kid, revoked } = await deps.attestKeys.rotate({ revokePrevious: Boolean(values['revoke-previous']) });
    await recordAction(operatorContext(deps), { action: 'attest_key.rotated', resource: `attest_key:${kid}`, details: { revokedPrevious: revoked } });
    return { kid, revokedPrevious: revoked };
  },
  audit: async (deps, args) => {
    const { values } = options(args, { app: { type: 'string' }, limit: { type: 'string' } });
    const limit = limitOf(values.limit, 100);
    // Without --app: every entry, operator and staff actions included.
    const appId = values.app === undefined ? null : required(values.app, 'app');
    const page = await deps.repos.audit.list(appId, { limit });
    return {
      data: page.data.map((d) => ({
        id: d._id,
        appId: d.appId,
        action: d.action,
        occurredAt: d.occurredAt,
        actor: d.actor ?? null,
        resource: d.resource ?? null,
        subject: d.subject,
        reason: d.reason,
        ruleId: d.ruleId,
        details: d.details,
      })),
      hasMore: page.hasMore,
    };
  },
};
