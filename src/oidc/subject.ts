/**
 * GitHub Actions subjects (`sub`) and the `*` wildcard of trust-rule patterns. Pure functions.
 *
 * A rule is matched against the token's verified claims (`repository`, `ref`, `environment`, ...), never against
 * text parsed out of `sub`: GitHub issues the subject in a named form (`repo:acme/app:ref:refs/heads/main`), an
 * immutable form (`repo:acme@4242/app@123:ref:...`) and any form a repository's subject template asks for
 * (`repo:acme/app:environment:prod:job_workflow_ref:...`, `repository_owner_id:4242:repository_id:123:...`). The
 * subject is only checked to be fully explained by the claims of the same token (spec check 5), so a token can
 * never borrow another repository's subject, whatever its form.
 */

/** A claim value that matching reads, or null when the token has none. */
export type ClaimText = string | null;

/** The claims a subject is explained by. All of them come from a token whose signature is verified. */
export type SubjectClaims = Readonly<Record<string, unknown>>;

/** Why a subject was refused; null when the claims explain it. */
export type SubjectProblem = 'subject_mismatch' | 'subject_unrecognized' | 'pull_request' | null;

const REPOSITORY = /^([A-Za-z0-9-]{1,39})\/([A-Za-z0-9._-]{1,100})$/;
const SUBJECT_REPO = /^repo:([^/:@]+)(?:@[0-9]+)?\/([^/:@]+)(?:@[0-9]+)?(?::|$)/;
const MAX_SUBJECT_LENGTH = 2048;

/**
 * Claim keys a repository's subject template may include (GitHub, "Customizing the subject claims"), each written
 * `<key>:<claim value>`. `repo` and `context` are GitHub's two composite keys, expanded in `expansions`.
 */
const TEMPLATE_KEYS = [
  'actor',
  'actor_id',
  'base_ref',
  'check_run_id',
  'enterprise',
  'enterprise_id',
  'environment',
  'event_name',
  'head_ref',
  'job_workflow_ref',
  'job_workflow_sha',
  'ref',
  'ref_protected',
  'ref_type',
  'repository',
  'repository_id',
  'repository_owner',
  'repository_owner_id',
  'repository_visibility',
  'run_attempt',
  'run_id',
  'run_number',
  'runner_environment',
  'sha',
  'workflow',
  'workflow_ref',
  'workflow_sha',
] as const;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Every `key:value` piece the claims can put into a subject. */
function expansions(claims: SubjectClaims): string[] {
  const pieces: string[] = [];
  const repository = text(claims.repository);
  const parts = repository ? REPOSITORY.exec(repository) : null;
  if (parts) {
    pieces.push(`repo:${repository}`);
    const ownerId = text(claims.repository_owner_id);
    const repoId = text(claims.repository_id);
    // The immutable form pins the ids the token claims next to the names.
    if (ownerId && repoId) pieces.push(`repo:${parts[1]}@${ownerId}/${parts[2]}@${repoId}`);
  }
  // `context`: the environment when the job has one, else the ref (a pull request's is refused before matching).
  const environment = text(claims.environment);
  const ref = text(claims.ref);
  if (environment) pieces.push(`environment:${environment}`);
  if (ref) pieces.push(`ref:${ref}`);
  for (const key of TEMPLATE_KEYS) {
    const value = text(claims[key]);
    if (value !== null) pieces.push(`${key}:${value}`);
  }
  return pieces;
}

/**
 * Whether `sub` is a sequence of `:`-joined pieces the claims produce, with the repository named at most once as
 * `repo:`. Dynamic programming over positions: linear in the subject times the number of pieces.
 */
function explained(sub: string, pieces: string[]): boolean {
  const reachable = new Uint8Array(sub.length + 1);
  reachable[0] = 1;
  for (let at = 0; at < sub.length; at++) {
    if (!reachable[at]) continue;
    for (const piece of pieces) {
      if (!sub.startsWith(piece, at)) continue;
      const end = at + piece.length;
      if (end === sub.length) return true;
      if (sub[end] === ':') reachable[end + 1] = 1;
    }
  }
  return false;
}

/**
 * Checks the subject against the claims of the same token: null when every part of it is one of the token's own
 * claims (in any order GitHub's templates produce). A `repo:` naming another repository is `subject_mismatch`; a
 * pull-request subject is `pull_request`; anything else the claims do not explain is `subject_unrecognized`.
 */
export function subjectProblem(sub: string, claims: SubjectClaims): SubjectProblem {
  if (sub.length === 0 || sub.length > MAX_SUBJECT_LENGTH) return 'subject_unrecognized';
  if (sub.split(':').includes('pull_request')) return 'pull_request';
  if (explained(sub, expansions(claims))) return null;
  const named = SUBJECT_REPO.exec(sub);
  const repository = text(claims.repository);
  if (named && (!repository || repository.toLowerCase() !== `${named[1]}/${named[2]}`.toLowerCase())) return 'subject_mismatch';
  if (named) return 'subject_mismatch'; // the right names with other ids: still another repository
  return 'subject_unrecognized';
}

/** Most `*` a pattern may hold: with the linear matcher below this bounds the work per check. */
export const MAX_WILDCARDS = 8;

/**
 * Glob matching of one colon-free segment, where `*` matches any run of characters. The pattern is cut at its stars
 * into literal pieces: the first must start the text, the last must end it, and each one between is placed at its
 * leftmost occurrence after the previous one (leftmost placement never loses a match). Nothing is ever retried, so
 * the work is one left-to-right pass per piece: at most (stars + 1) scans of the text, never exponential.
 */
function segmentMatches(pattern: string, text: string): boolean {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return pattern === text;
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length; // the middle pieces must fit before the last one
  let at = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i];
    if (piece.length === 0) continue;
    const found = text.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/**
 * `*` matches any text that contains no colon (spec, Trust rule); everything else is literal. Since neither side
 * can let a `*` cross a colon, the pattern and the text are compared segment by segment.
 */
export function wildcardMatches(pattern: string, value: string, opts: { ignoreCase: boolean }): boolean {
  const patternSegments = (opts.ignoreCase ? pattern.toLowerCase() : pattern).split(':');
  const valueSegments = (opts.ignoreCase ? value.toLowerCase() : value).split(':');
  if (patternSegments.length !== valueSegments.length) return false;
  return patternSegments.every((segment, i) => segmentMatches(segment, valueSegments[i]));
}

export const wildcardCount = (pattern: string): number => pattern.split('*').length - 1;

/** A rule pattern `repo:<owner>/<repo>:<kind>:<value>`, split. */
export interface ParsedPattern {
  owner: string;
  repo: string;
  kind: string; // "ref" or "environment" for a valid rule
  value: string;
  context: string; // `<kind>:<value>`
}

const PATTERN = /^repo:([^/:]+)\/([^/:]+):(([^:]+):?(.*))$/s;

/** Splits a rule pattern; null when it has another shape. */
export function parsePattern(pattern: string): ParsedPattern | null {
  const m = PATTERN.exec(pattern);
  return m ? { owner: m[1], repo: m[2], context: m[3], kind: m[4], value: m[5] } : null;
}

/** The owner and name of a `repository` claim, or null when it is not one. */
export function splitRepository(repository: ClaimText): { owner: string; repo: string } | null {
  const m = repository ? REPOSITORY.exec(repository) : null;
  return m ? { owner: m[1], repo: m[2] } : null;
}
