import { issuerAllowed, type IssuerPolicy } from '../issuers';
import type { ProviderModel, RuleConditions } from './model';
import { providerModel } from './registry';

export interface Judge {
  model: ProviderModel;
  issuer: string;
}

/**
 * Which provider judges a token that names `claimedIssuer`, for an app with these rules: GitHub's model for the
 * configured GitHub issuer (and a token naming none, which its verification then refuses); for any other issuer the
 * provider of the app's rule that names it, while the operator still allows it. Null: no rule of the app trusts that
 * issuer, so nothing about the token is worth fetching a key for.
 */
export function judgeOf(rules: readonly RuleConditions[], claimedIssuer: string | null, policy: IssuerPolicy): Judge | null {
  if (claimedIssuer === null || claimedIssuer === policy.githubIssuer) return { model: providerModel('github'), issuer: policy.githubIssuer };
  const naming = rules.find((rule) => rule.issuer === claimedIssuer && issuerAllowed(rule.provider ?? 'github', claimedIssuer, policy));
  return naming ? { model: providerModel(naming.provider), issuer: claimedIssuer } : null;
}
