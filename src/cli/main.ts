import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../core/config';
import { createDeps, closeDeps } from '../bootstrap';
import { createLogger } from '../core/logger';
import { resolveDatabase } from '../embedded/database';
import { isDomainError } from '../core/errors';
import type { Deps } from '../core/deps';
import { createApp } from '../services/apps-service';
import { createApiKey, createStaff, listStaff, revokeApiKey, revokeStaff } from '../services/keys-service';
import { recordAction } from '../services/audit-service';
import { parseDuration } from './duration';
import { operatorContext } from '../services/operator-context';

const USAGE = `usage:
  shieldgate app create --name NAME --plan PLAN [--org ORG]
  shieldgate key create --app APP_ID --scopes s1,s2 [--test] [--name NAME]
  shieldgate key revoke KEY_ID
  shieldgate staff create --role support|admin [--name NAME] [--ttl DURATION]   (DURATION: 3600, 90m, 12h, 7d; default 12h)
  shieldgate staff list
  shieldgate staff revoke STAFF_ID
  shieldgate signing-key rotate [--revoke-previous]
  shieldgate audit [--app APP_ID] [--limit N]`;

class UsageError extends Error {}

type Command = (deps: Deps, args: string[]) => Promise<unknown>;

function options(args: string[], spec: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

const commands: Record<string, Command> = {
  'app create': async (deps, args) => {
    const { values } = options(args, { name: { type: 'string' }, plan: { type: 'string' }, org: { type: 'string' } });
    const app = await createApp(operatorContext(deps), { name: required(values.name, 'name'), plan: required(values.plan, 'plan'), org: values.org as string | undefined });
    return { id: app._id, name: app.name, plan: app.plan, org: app.org };
  },
  'key create': async (deps, args) => {
    const { values } = options(args, { app: { type: 'string' }, scopes: { type: 'string' }, test: { type: 'boolean' }, name: { type: 'string' } });
    const scopes = required(values.scopes, 'scopes').split(',').map((s) => s.trim()).filter(Boolean);
    const created = await createApiKey(operatorContext(deps), { appId: required(values.app, 'app'), scopes, mode: values.test ? 'test' : 'live', name: values.name as string | undefined });
    return { id: created.doc._id, key: created.key, appId: created.doc.appId, scopes: created.doc.scopes, mode: created.doc.mode };
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
  audit: async (deps, args) => {
    const { values } = options(args, { app: { type: 'string' }, limit: { type: 'string' } });
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be an integer from 1 to 100');
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

function pick(argv: string[]): { command: Command; rest: string[] } {
  const two = `${argv[0]} ${argv[1]}`;
  if (commands[two]) return { command: commands[two], rest: argv.slice(2) };
  if (argv[0] && commands[argv[0]]) return { command: commands[argv[0]], rest: argv.slice(1) };
  throw new UsageError(argv.length ? `unknown command "${argv.slice(0, 2).join(' ')}"` : 'no command given');
}

/** One JSON object on stdout per call; a one-line error on stderr and a non-zero exit otherwise. */
export async function runCli(argv: string[]): Promise<number> {
  let database: Awaited<ReturnType<typeof resolveDatabase>> | null = null;
  let deps: Deps | null = null;
  try {
    const { command, rest } = pick(argv);
    const base = loadConfig();
    database = await resolveDatabase(base, { reuseRunning: true, record: false });
    const config = Object.freeze({ ...base, mongodbUri: database.uri, redisUrl: null });
    deps = await createDeps(config, { logger: createLogger('silent') });
    const result = await command(deps, rest);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    const message =
      error instanceof UsageError ? `${error.message}\n${USAGE}`
      : error instanceof ConfigError ? `configuration error: ${error.message}`
      : isDomainError(error) ? [error.message, ...(error.errors ?? []).map((e) => `${e.pointer} ${e.message}`)].join('; ')
      : error instanceof Error ? error.message
      : String(error);
    process.stderr.write(`shieldgate: ${message}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    if (deps) await closeDeps(deps);
    if (database) await database.stop();
  }
}
