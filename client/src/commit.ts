import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Env } from './github';
import { detectProvider, PROVIDERS } from './providers/detect';

/**
 * The variables CI systems set to the commit a job checked out: GitHub Actions, GitLab CI, Bitrise, CircleCI, Azure
 * Pipelines. In this order; a job runs in one CI, so at most one is normally set. Read when the job's CI is not one
 * detected from its environment (providers/detect.ts), whose own variable is read first.
 */
export const CI_COMMIT_VARIABLES = ['GITHUB_SHA', 'CI_COMMIT_SHA', 'BITRISE_GIT_COMMIT', 'CIRCLE_SHA1', 'BUILD_SOURCEVERSION'] as const;

/** Every variable a commit may come from, for the line that says none held one. */
export const KNOWN_COMMIT_VARIABLES: readonly string[] = [...new Set([...PROVIDERS.map((p) => p.commitVariable), ...CI_COMMIT_VARIABLES])];

/** A full SHA-1 or SHA-256 object name. Azure's BUILD_SOURCEVERSION is a changeset number for TFVC, not a commit. */
const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;

export interface DetectedCommit {
  commit: string | null;
  /** Where it came from: `--commit`, the CI variable's name, `git` (the file's repository) or `none`. */
  source: '--commit' | (typeof CI_COMMIT_VARIABLES)[number] | 'BUILDKITE_COMMIT' | 'BITBUCKET_COMMIT' | 'git' | 'none';
}

/**
 * HEAD of the git repository that holds `file`'s folder, or null. Git is asked from that folder with GIT_* variables
 * removed (GIT_DIR, GIT_WORK_TREE would point it at another repository), so neither the working directory of the job
 * nor the checkout this client runs from is ever taken for the app's repository.
 */
export function repositoryHead(file: string): string | null {
  const cleanEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) cleanEnv[name] = value;
  try {
    const head = execFileSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
      cwd: path.dirname(path.resolve(file)),
      env: cleanEnv,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    }).toString().trim();
    return FULL_SHA.test(head) ? head.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * The commit a build was made from: `--commit`, else the variable of the CI the job is detected in, else any CI's
 * variable, else HEAD of the git repository holding `file`, else none (the service's preview scan then reports
 * `preview.commit-missing`). Buildkite's BUILDKITE_COMMIT may be `HEAD` (a build asked for without a commit): not a
 * commit, so the next source is asked.
 */
export function detectCommit(explicit: string | undefined, env: Env, file?: string): DetectedCommit {
  if (explicit) return { commit: explicit, source: '--commit' };
  const provider = detectProvider(env);
  const own = provider?.commit(env)?.trim();
  if (provider && own && FULL_SHA.test(own)) return { commit: own, source: provider.commitVariable as DetectedCommit['source'] };
  for (const name of CI_COMMIT_VARIABLES) {
    const value = env[name]?.trim();
    if (value && FULL_SHA.test(value)) return { commit: value, source: name };
  }
  const head = file ? repositoryHead(file) : null;
  return head ? { commit: head, source: 'git' } : { commit: null, source: 'none' };
}

/** The commit alone (see detectCommit). */
export function resolveCommit(explicit: string | undefined, env: Env, file?: string): string | null {
  return detectCommit(explicit, env, file).commit;
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
