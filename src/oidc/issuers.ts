/**
 * Which issuers a rule may name, per provider, and so whose keys the service may ever fetch. The operator decides:
 * a provider's public issuer (gitlab.com, Buildkite's agent issuer), the per-organisation shapes of CircleCI and
 * Bitbucket on their own hosts, and whatever `OIDC_ALLOWED_ISSUERS` lists (self-managed GitLab). A tenant can never
 * make the service fetch an address the operator did not allow.
 */
import type { Config } from '../core/config';
import type { ProviderId } from './providers/model';

/** The issuer a rule of the provider trusts when it names none (GitHub's is the configured OIDC_ISSUER). */
export const DEFAULT_ISSUERS: Partial<Record<ProviderId, string>> = {
  gitlab: 'https://gitlab.com',
  buildkite: 'https://agent.buildkite.com',
};

/** Issuers whose shape itself names the tenant, on the provider's own host. */
const ISSUER_SHAPES: Partial<Record<ProviderId, { shape: RegExp; example: string }>> = {
  // CircleCI: one issuer per organisation; the bare https://oidc.circleci.com is no tenant's and is refused.
  circleci: { shape: /^https:\/\/oidc\.circleci\.com\/org\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, example: 'https://oidc.circleci.com/org/<organization id>' },
  bitbucket: {
    shape: /^https:\/\/api\.bitbucket\.org\/2\.0\/workspaces\/[a-z0-9][a-z0-9_-]{0,61}\/pipelines-config\/identity\/oidc$/,
    example: 'https://api.bitbucket.org/2.0/workspaces/<workspace>/pipelines-config/identity/oidc',
  },
};

export interface IssuerPolicy {
  /** GitHub's issuer (OIDC_ISSUER). */
  githubIssuer: string;
  /** OIDC_ALLOWED_ISSUERS: further issuers the operator allows for any provider but GitHub. */
  allowedIssuers: readonly string[];
}

export const issuerPolicyOf = (config: Pick<Config, 'oidcIssuer' | 'oidcAllowedIssuers'>): IssuerPolicy => ({
  githubIssuer: config.oidcIssuer,
  allowedIssuers: config.oidcAllowedIssuers,
});

/** The issuer a new rule of the provider gets when it names none; null when it must name one. */
export const defaultIssuer = (provider: ProviderId, policy: IssuerPolicy): string | null =>
  provider === 'github' ? policy.githubIssuer : (DEFAULT_ISSUERS[provider] ?? null);

/** Whether a rule of the provider may name this issuer (checked at creation, and again at every exchange). */
export function issuerAllowed(provider: ProviderId, issuer: string, policy: IssuerPolicy): boolean {
  if (provider === 'github') return issuer === policy.githubIssuer;
  if (issuer === policy.githubIssuer) return false; // GitHub's tokens are judged by GitHub's model only
  if (DEFAULT_ISSUERS[provider] === issuer) return true;
  if (ISSUER_SHAPES[provider]?.shape.test(issuer)) return true;
  return policy.allowedIssuers.includes(issuer);
}

/** What a rule's issuer must be, for the 422 that refuses another. */
export function issuerHint(provider: ProviderId): string {
  const own = DEFAULT_ISSUERS[provider] ?? ISSUER_SHAPES[provider]?.example;
  return provider === 'github'
    ? 'GitHub rules trust the configured issuer (OIDC_ISSUER) only; leave issuer out'
    : `must be ${own}, or an issuer the operator lists in OIDC_ALLOWED_ISSUERS`;
}
