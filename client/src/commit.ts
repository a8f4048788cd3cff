import { execFileSync } from 'node:child_process';
import type { Env } from './github';

/** The commit a build was made from: --commit, else GITHUB_SHA, else `git rev-parse HEAD`; null when none is known. */
export function resolveCommit(explicit: string | undefined, env: Env, cwd = process.cwd()): string | null {
  if (explicit) return explicit;
  if (env.GITHUB_SHA) return env.GITHUB_SHA;
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).toString().trim();
    return /^[0-9a-f]{40,64}$/.test(head) ? head : null;
  } catch {
    return null;
  }
}

/**
 * Idempotency-Key of the registration: the run, its attempt and the file's hash. A step retried inside the same run
 * attempt replays the first registration instead of making a second build; a re-run of the job is a new attempt.
 */
export function idempotencyKey(env: Env, sha256: string): string | undefined {
  const runId = env.GITHUB_RUN_ID;
  if (!runId || !/^\d{1,20}$/.test(runId)) return undefined;
  const attempt = /^\d{1,6}$/.test(env.GITHUB_RUN_ATTEMPT ?? '') ? env.GITHUB_RUN_ATTEMPT : '1';
  return `sgci.${runId}.${attempt}.${sha256}`;
}
