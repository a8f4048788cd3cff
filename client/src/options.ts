/** The options of `shieldgate-ci` and their checks: a wrong value is a usage error (exit 1) before anything is sent. */
import { parseArgs } from 'node:util';
import { CliError } from './errors';
import { isGrade, type Grade } from './grades';
import { isSeverity, SEVERITIES, type Severity } from './severities';
import { DEFAULT_ID_TOKEN_VAR } from './providers/types';

export const OPTIONS = {
  app: { type: 'string' },
  file: { type: 'string' },
  platform: { type: 'string' },
  version: { type: 'string' },
  commit: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  'fail-under': { type: 'string' },
  'fail-on-new': { type: 'string' },
  sarif: { type: 'string' },
  'manifest-path': { type: 'string' },
  'id-token-var': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export function required(values: Values, name: 'app' | 'file' | 'platform' | 'version'): string {
  const value = values[name];
  if (!value) throw new CliError(`--${name} is required`);
  return value;
}

export function failUnder(values: Values): Grade | undefined {
  const value = values['fail-under'];
  if (value === undefined) return undefined;
  if (!isGrade(value)) throw new CliError(`--fail-under must be a grade from A+ to F, not "${value}"`);
  return value;
}

export function failOnNew(values: Values): Severity | undefined {
  const value = values['fail-on-new'];
  if (value === undefined) return undefined;
  if (!isSeverity(value)) throw new CliError(`--fail-on-new must be one of ${SEVERITIES.join(', ')}, not "${value}"`);
  return value;
}

/** Asked to gate or to write SARIF: the command waits for the scan. */
export const waits = (values: Values) => Boolean(values.wait || values['fail-under'] || values['fail-on-new'] || values.sarif);

export function timeoutMs(values: Values): number {
  if (values.timeout === undefined) return 600_000;
  if (!/^\d{1,6}$/.test(values.timeout) || Number(values.timeout) < 1) throw new CliError('--timeout must be a number of seconds');
  return Number(values.timeout) * 1000;
}

/** GitLab's `id_tokens:` variable the job's token is in: a variable name, SHIELDGATE_ID_TOKEN unless given. */
export function idTokenVar(values: Values): string {
  const value = values['id-token-var'];
  if (value === undefined) return DEFAULT_ID_TOKEN_VAR;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(value)) throw new CliError(`--id-token-var must be a variable name (letters, digits, _), not "${value}"`);
  return value;
}
