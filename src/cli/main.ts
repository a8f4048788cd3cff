import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../core/config';
import { createDeps, closeDeps } from '../bootstrap';
import { createLogger } from '../core/logger';
import { isDomainError } from '../core/errors';
import type { Deps } from '../core/deps';
import { resolveDatabase, runningService, type ResolvedDatabase } from '../embedded/database';
import { dialAddress, shieldgateAnswers } from '../embedded/running-instance';
import { commands, UsageError, USAGE, type Command } from './commands';

function pick(argv: string[]): { command: Command; rest: string[] } {
  const two = `${argv[0]} ${argv[1]}`;
  if (commands[two]) return { command: commands[two], rest: argv.slice(2) };
  if (argv[0] && commands[argv[0]]) return { command: commands[argv[0]], rest: argv.slice(1) };
  throw new UsageError(argv.length ? `unknown command "${argv.slice(0, 2).join(' ')}"` : 'no command given');
}

/** Takes `--data-dir DIR` (or `--data-dir=DIR`) out of argv, wherever it stands. */
export function takeDataDir(argv: string[]): { dataDir: string | null; rest: string[] } {
  const rest: string[] = [];
  let dataDir: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--data-dir' || arg.startsWith('--data-dir=')) {
      const value = arg === '--data-dir' ? argv[++i] : arg.slice('--data-dir='.length);
      if (!value) throw new UsageError('--data-dir needs a folder');
      dataDir = value;
    } else rest.push(arg);
  }
  return { dataDir, rest };
}

/** A MongoDB address without its credentials (user:password@), for the line saying where the CLI went. */
export function withoutCredentials(uri: string): string {
  return uri.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1');
}

/**
 * The database of this call. Without MONGODB_URI, the CLI uses the embedded database of the service running on
 * DATA_DIR; when none runs there but a shieldgate answers on PORT, that service keeps its data elsewhere, and a
 * private database here would hold apps and keys it never sees: refused, unless --data-dir asked for this folder.
 */
async function chooseDatabase(config: Config, explicitDataDir: boolean): Promise<ResolvedDatabase> {
  if (!config.mongodbUri && !explicitDataDir && !(await runningService(config))) {
    const address = dialAddress(config.host, config.port);
    if (await shieldgateAnswers(address)) {
      throw new Error(
        `a shieldgate runs at ${address}, but not on DATA_DIR ${config.dataDir}: run this with the service's DATA_DIR (or MONGODB_URI), or pass --data-dir ${config.dataDir} to use a database of its own there`,
      );
    }
  }
  return resolveDatabase(config, { reuseRunning: true, record: null });
}

/** One line on stderr: which database this call reached. */
function databaseLine(config: Config, database: ResolvedDatabase): string {
  const db = config.mongodbDatabase;
  switch (database.source) {
    case 'configured':
      return `database ${db} at ${withoutCredentials(database.uri)} (MONGODB_URI)`;
    case 'running':
      return `database ${db} of the service running on DATA_DIR ${config.dataDir}`;
    case 'started':
      return `database ${db} embedded under ${path.join(config.dataDir, 'db')}, started for this call (no service runs on this DATA_DIR)`;
  }
}

/** One JSON object on stdout per call; a one-line error on stderr and a non-zero exit otherwise. */
export async function runCli(argv: string[]): Promise<number> {
  let database: ResolvedDatabase | null = null;
  let deps: Deps | null = null;
  try {
    if (argv.length === 1 && ['--help', '-h', 'help'].includes(argv[0])) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const { dataDir, rest: args } = takeDataDir(argv);
    const { command, rest } = pick(args);
    const base = loadConfig(dataDir ? { ...process.env, DATA_DIR: dataDir } : process.env);
    database = await chooseDatabase(base, dataDir !== null);
    process.stderr.write(`shieldgate: ${databaseLine(base, database)}\n`);
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
