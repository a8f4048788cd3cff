/**
 * A refused exchange is explained from the job's own token, decoded locally (never verified, never printed): the
 * claims trust rules look at, and a rule that would admit this job.
 */
export const RULE_CLAIMS = ['sub', 'repository', 'repository_id', 'repository_owner_id', 'ref', 'environment', 'event_name', 'job_workflow_ref'] as const;

export type UnverifiedClaims = Partial<Record<(typeof RULE_CLAIMS)[number], string>>;

/** The claims rules look at, from the payload of a compact JWS; null when it is not one. */
export function decodeRuleClaims(unverifiedToken: string): UnverifiedClaims | null {
  const parts = unverifiedToken.split('.');
  if (parts.length !== 3 || parts[1].length > 16_384) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!payload || typeof payload !== 'object') return null;
  const claims: UnverifiedClaims = {};
  for (const name of RULE_CLAIMS) {
    const value = (payload as Record<string, unknown>)[name];
    if (typeof value === 'string' || typeof value === 'number') claims[name] = String(value).slice(0, 512);
  }
  return claims;
}

/** Events whose jobs run code from forks: the service never trusts them, whatever the rule. */
const NEVER_TRUSTED_EVENTS = ['pull_request', 'pull_request_target'];

export interface SuggestedRule {
  subjectPattern: string;
  workflowRef?: string;
  environment?: string;
  repositoryId?: string;
  repositoryOwnerId?: string;
  scopes: string[];
}

/** A trust rule that admits exactly this job's repository, ref (or environment) and workflow. */
export function suggestRule(claims: UnverifiedClaims): SuggestedRule | null {
  if (!claims.sub || !claims.repository) return null;
  if (claims.event_name && NEVER_TRUSTED_EVENTS.includes(claims.event_name)) return null;
  // A subject in GitHub's immutable form (repo:owner@ID/name@ID:...) is written with names: the service matches it
  // by the token's repository claim, and the ids go in repositoryId / repositoryOwnerId.
  const context = /^repo:[^:]+:(.+)$/.exec(claims.sub)?.[1] ?? null;
  const rule: SuggestedRule = {
    subjectPattern: context ? `repo:${claims.repository}:${context}` : claims.sub,
    scopes: ['builds:write', 'builds:read', 'scans:read'],
  };
  if (claims.job_workflow_ref) rule.workflowRef = claims.job_workflow_ref;
  if (claims.environment) rule.environment = claims.environment;
  if (claims.repository_id) rule.repositoryId = claims.repository_id;
  if (claims.repository_owner_id) rule.repositoryOwnerId = claims.repository_owner_id;
  return rule;
}

/** What the report says of a job outside GitHub Actions, whose claims GitHub's rule suggestion does not fit. */
export interface RefusedJob {
  provider: string;
  ref?: string;
  runUrl?: string;
  /** The CI gives a job one token (GitLab, Bitbucket): a second exchange of it is refused as replayed. */
  oneTokenPerJob: boolean;
  /** The token was sent again after a transient failure, so the first attempt may have spent it. */
  resent: boolean;
}

/** The lines printed for a refused exchange: GitHub's with a rule that would admit the job, others with the job. */
export function refusalReport(appId: string, serverUrl: string, claims: UnverifiedClaims | null, job?: RefusedJob): string[] {
  const lines = [`The service refused this job's OIDC token for app ${appId}: no trust rule of the app admits it.`];
  if (job) return [...lines, ...otherCiReport(claims, job)];
  if (!claims) return [...lines, 'The token GitHub gave could not be decoded to show its claims.'];
  lines.push("This job's claims (decoded locally from its token, not verified):");
  for (const name of RULE_CLAIMS) lines.push(`  ${name}: ${claims[name] ?? '(absent)'}`);
  const rule = suggestRule(claims);
  if (!rule) {
    lines.push(`Jobs of "${claims.event_name}" events run code from forks and are never trusted; register builds from a push, release or workflow_dispatch job.`);
    return lines;
  }
  lines.push(
    'A trust rule that would admit this job (create it with an API key that has rules:write):',
    `  curl -X POST ${serverUrl.replace(/\/+$/, '')}/v1/apps/${appId}/oidc-rules \\`,
    '    -H "Authorization: Bearer $SHIELDGATE_ADMIN_KEY" -H "Content-Type: application/json" \\',
    `    -d '${JSON.stringify(rule).replace(/'/g, "'\\''")}'`,
  );
  return lines;
}

/** The job, the claims every provider's token has, and why a one-token-per-job CI may see a refusal of a spent token. */
function otherCiReport(claims: UnverifiedClaims | null, job: RefusedJob): string[] {
  const lines = [`This job: ${[job.provider, job.ref, job.runUrl].filter(Boolean).join(', ')}`];
  if (!claims) lines.push(`The token ${job.provider} gave could not be decoded to show its claims.`);
  else {
    lines.push("Its token's claims (decoded locally, not verified):");
    for (const name of ['sub', 'ref', 'environment'] as const) if (claims[name]) lines.push(`  ${name}: ${claims[name]}`);
  }
  if (job.oneTokenPerJob) {
    lines.push(
      job.resent
        ? `${job.provider} gives a job one token and the service accepts it once: the attempt before this one may have spent it.`
        : `${job.provider} gives a job one token and the service accepts it once: if an earlier shieldgate-ci command of this job exchanged it, that is why (one command per job: upload --wait).`,
    );
  }
  lines.push(`The trust rules of ${job.provider} jobs: docs/keyless-ci.md.`);
  return lines;
}
