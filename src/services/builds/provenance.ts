/**
 * Provenance of a build registered by a CI job: the verified claims of the job's OIDC token (GitHub Actions names),
 * recorded at the exchange and copied onto every build the access token registers.
 */
export interface BuildProvenance {
  repository: string | null;
  repositoryId: string | null;
  /** Claim job_workflow_ref: the workflow file (and ref) the job ran, reusable workflows included. */
  workflowRef: string | null;
  sha: string | null;
  ref: string | null;
  runId: string | null;
  runAttempt: string | null;
  eventName: string | null;
  /** `github-hosted` or `self-hosted`. */
  runnerEnvironment: string | null;
}

const MAX_CLAIM_LENGTH = 512;

function claim(payload: Readonly<Record<string, unknown>>, name: string): string | null {
  const value = payload[name];
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_CLAIM_LENGTH) : null;
}

/** From the payload of a token whose signature, issuer, audience and lifetime were verified. */
export function provenanceFromClaims(verifiedPayload: Readonly<Record<string, unknown>>): BuildProvenance {
  return {
    repository: claim(verifiedPayload, 'repository'),
    repositoryId: claim(verifiedPayload, 'repository_id'),
    workflowRef: claim(verifiedPayload, 'job_workflow_ref'),
    sha: claim(verifiedPayload, 'sha'),
    ref: claim(verifiedPayload, 'ref'),
    runId: claim(verifiedPayload, 'run_id'),
    runAttempt: claim(verifiedPayload, 'run_attempt'),
    eventName: claim(verifiedPayload, 'event_name'),
    runnerEnvironment: claim(verifiedPayload, 'runner_environment'),
  };
}
