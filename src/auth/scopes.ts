/** Every scope the service knows, and which of them each kind of credential may carry. */
export const SCOPES = [
  'builds:write',
  'builds:read',
  'scans:read',
  'threats:read',
  'attest:verify',
  'events:ingest',
  'rules:read',
  'rules:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Device scopes belong to the SDK on devices; rules scopes let a key widen trust. Neither ever reaches a CI job. */
export const DEVICE_SCOPES: readonly Scope[] = ['attest:verify', 'events:ingest'];
export const RULES_SCOPES: readonly Scope[] = ['rules:read', 'rules:write'];
export const ACCESS_TOKEN_SCOPES: readonly Scope[] = ['builds:write', 'builds:read', 'scans:read', 'threats:read'];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The scopes a valid trust rule grants, deduplicated, in the service's canonical order. */
export function grantedScopes(scopes: string[]): Scope[] {
  return ACCESS_TOKEN_SCOPES.filter((scope) => scopes.includes(scope));
}
