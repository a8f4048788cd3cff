/**
 * GitHub Actions subjects (`sub`) and trust-rule patterns. Pure functions: what a subject says and whether a rule's
 * pattern covers it. Names of owners and repositories compare case-insensitively, as GitHub treats them; the rest
 * of a subject (ref, environment) compares exactly.
 */

/** A subject in named form, split: `repo:<owner>/<repo>:<context>`. */
export interface NamedSubject {
  owner: string;
  repo: string;
  context: string; // e.g. "ref:refs/heads/main", "environment:prod", "pull_request"
}

/** The claims a subject is checked against. All of them come from a token whose signature is verified. */
export interface RepositoryClaims {
  sub: string;
  repository: string;
  repositoryId: string | null;
  repositoryOwnerId: string | null;
}

const REPOSITORY = /^([A-Za-z0-9-]{1,39})\/([A-Za-z0-9._-]{1,100})$/;
const NAMED_SUBJECT = /^repo:([^/:@]+)\/([^/:@]+):(.+)$/s;
// GitHub's immutable form pins the owner and repository ids into the subject itself.
const IMMUTABLE_SUBJECT = /^repo:([^/:@]+)@([0-9]+)\/([^/:@]+)@([0-9]+):(.+)$/s;
const PATTERN = /^repo:([^/:]+)\/([^/:]+):(.+)$/s;

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The subject in named form when it belongs to the repository the token claims (and, in the immutable form, to the
 * ids the token claims); null when it does not, so a token cannot borrow another repository's subject.
 */
export function resolveSubject(claims: RepositoryClaims): NamedSubject | null {
  const repository = REPOSITORY.exec(claims.repository);
  if (!repository) return null;
  const [, owner, repo] = repository;
  const immutable = IMMUTABLE_SUBJECT.exec(claims.sub);
  if (immutable) {
    const [, subOwner, subOwnerId, subRepo, subRepoId, context] = immutable;
    if (!sameName(subOwner, owner) || !sameName(subRepo, repo)) return null;
    if (claims.repositoryOwnerId !== subOwnerId || claims.repositoryId !== subRepoId) return null;
    return { owner, repo, context };
  }
  const named = NAMED_SUBJECT.exec(claims.sub);
  if (!named) return null;
  const [, subOwner, subRepo, context] = named;
  if (!sameName(subOwner, owner) || !sameName(subRepo, repo)) return null;
  return { owner, repo, context };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `*` matches any text that contains no colon (spec, Trust rule); everything else is literal. */
export function wildcardMatches(pattern: string, text: string, opts: { ignoreCase: boolean }): boolean {
  const source = pattern.split('*').map(escapeRegExp).join('[^:]*');
  return new RegExp(`^${source}$`, opts.ignoreCase ? 'is' : 's').test(text);
}

/** Splits a rule pattern `repo:<owner>/<repo>:<context>`; null when it has another shape. */
export function parsePattern(pattern: string): { owner: string; repo: string; context: string } | null {
  const m = PATTERN.exec(pattern);
  return m ? { owner: m[1], repo: m[2], context: m[3] } : null;
}

/** Whether a rule's subject pattern covers a resolved subject. Owners never hold a wildcard (refused at creation). */
export function patternMatches(pattern: string, subject: NamedSubject): boolean {
  const parsed = parsePattern(pattern);
  if (!parsed) return false;
  return (
    sameName(parsed.owner, subject.owner) &&
    wildcardMatches(parsed.repo, subject.repo, { ignoreCase: true }) &&
    wildcardMatches(parsed.context, subject.context, { ignoreCase: false })
  );
}
