/**
 * What a step inside GitHub Actions can do: ask the runner for the job's OIDC token, mask a secret, write outputs and
 * the job summary, and annotate. Outside GitHub Actions every function here is a no-op (or says it cannot).
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { EOL } from 'node:os';
import { CliError } from './errors';
import { backoffMs, isRetryableStatus, sleep } from './retry';
import { printable } from './log-text';

export type Env = Record<string, string | undefined>;

export const inGitHubActions = (env: Env) => env.GITHUB_ACTIONS === 'true';

/** The runner's OIDC token endpoint is there only when the job has `permissions: id-token: write`. */
export const canRequestIdToken = (env: Env) => Boolean(env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN);

/**
 * The job's OIDC token for `audience`, asked the way @actions/core's getIDToken asks: GET the request URL with
 * `&audience=` appended and the request token as bearer; the answer is `{"value": "<jwt>"}`.
 */
export async function requestIdToken(env: Env, audience: string): Promise<string> {
  const url = `${env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=${encodeURIComponent(audience)}`;
  let lastError = '';
  for (let attempt = 1; attempt <= 4; attempt++) {
    // A renewal late in a long wait must survive a brief hiccup of the runner's token service.
    if (attempt > 1) await sleep(backoffMs(attempt - 1));
    try {
      const res = await fetch(url, { headers: { authorization: `Bearer ${env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}`, accept: 'application/json' } });
      if (res.ok) {
        const body = (await res.json()) as { value?: unknown };
        if (typeof body.value === 'string' && body.value.length > 0) return body.value;
        throw new CliError('GitHub answered the OIDC token request without a token');
      }
      lastError = `HTTP ${res.status}`;
      if (!isRetryableStatus(res.status)) break;
    } catch (error) {
      if (error instanceof CliError) throw error;
      lastError = (error as Error).message;
    }
  }
  throw new CliError(`could not get the job's OIDC token from GitHub (${lastError}); does the job have "permissions: id-token: write"?`);
}

// Workflow command escaping, as @actions/core does it.
const escapeData = (value: string) => value.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (value: string) => escapeData(value).replace(/:/g, '%3A').replace(/,/g, '%2C');

/**
 * Tells the runner to hide `secret` in every later log line. Written to stderr, which the runner reads for workflow
 * commands as it does stdout: a step that captures stdout (`out=$(shieldgate-ci ... --json)`) would otherwise keep
 * the secret in a variable and the runner would never see the mask.
 */
export function mask(env: Env, secret: string, out: NodeJS.WritableStream = process.stderr): void {
  if (inGitHubActions(env)) out.write(`::add-mask::${escapeData(secret)}${EOL}`);
}

export function annotate(env: Env, level: 'error' | 'warning' | 'notice', title: string, message: string, out: NodeJS.WritableStream = process.stdout): void {
  if (inGitHubActions(env)) out.write(`::${level} title=${escapeProperty(printable(title))}::${escapeData(printable(message))}${EOL}`);
}

/** Appends `name` to $GITHUB_OUTPUT in the delimiter form, which is safe for any value. */
export function setOutputs(env: Env, outputs: Record<string, string>): void {
  const file = env.GITHUB_OUTPUT;
  if (!file) return;
  const lines = Object.entries(outputs).map(([name, value]) => {
    const delimiter = `ghadelimiter_${randomUUID()}`;
    return `${name}<<${delimiter}${EOL}${value}${EOL}${delimiter}${EOL}`;
  });
  fs.appendFileSync(file, lines.join(''));
}

export function appendSummary(env: Env, markdown: string): void {
  if (env.GITHUB_STEP_SUMMARY) fs.appendFileSync(env.GITHUB_STEP_SUMMARY, markdown.endsWith(EOL) ? markdown : markdown + EOL);
}
