/**
 * The one evaluator of trust rules, for every provider, used by the exchange and the dry-run alike: the claims of a
 * token in, which rules match, the scopes they grant and, for every rule, the first check that failed. A rule is
 * judged only against tokens of its own provider and issuer: a token of one issuer never matches a rule of another.
 * Pure: it reads claims, never a token.
 */
import { grantedScopes, type Scope } from '../../auth/scopes';
import type { RefusalReason } from '../refusal';
import type { FailedCheck, ProviderModel, RuleConditions } from './model';

export interface RuleOutcome {
  id: string;
  matched: boolean;
  failed: FailedCheck | null;
}

export interface Evaluation<R extends RuleConditions = RuleConditions> {
  /** Whether the exchange would grant a token for these claims (signature and time aside). */
  matches: boolean;
  scopes: Scope[];
  /** Why the token is refused before any rule is consulted, or null. */
  refusal: RefusalReason | null;
  rules: RuleOutcome[];
  /** The matching rules, in the order given (oldest first). */
  matched: R[];
}

/** What every rule of another provider or issuer answers: the issuer check, with what it expected. */
const otherIssuer = (rule: RuleConditions, issuer: string | null): FailedCheck => ({
  check: 'issuer',
  expected: `${rule.provider ?? 'github'} ${rule.issuer ?? '(the configured GitHub issuer)'}`,
  actual: issuer,
});

/**
 * Evaluates the app's rules (oldest first) against a decoded payload of `issuer`, whose provider is `model`. A rule
 * belongs to the token when its provider is the model's and its issuer is the token's (a GitHub rule's null issuer
 * standing for `githubIssuer`).
 */
export function evaluateRules<R extends RuleConditions>(
  model: ProviderModel,
  issuer: string | null,
  githubIssuer: string,
  rules: R[],
  payload: Readonly<Record<string, unknown>>,
): Evaluation<R> {
  const refusal = model.tokenRefusal(payload);
  const outcomes = rules.map((rule) => {
    const failed = ruleIssuer(rule, githubIssuer) !== issuer || (rule.provider ?? 'github') !== model.id ? otherIssuer(rule, issuer) : model.firstFailure(rule, payload);
    return { rule, outcome: { id: rule._id, matched: failed === null, failed } };
  });
  const matched = refusal === null ? outcomes.filter(({ outcome }) => outcome.matched).map(({ rule }) => rule) : [];
  return {
    matches: matched.length > 0,
    scopes: grantedScopes(matched.flatMap((rule) => rule.scopes)),
    refusal,
    rules: outcomes.map(({ outcome }) => outcome),
    matched,
  };
}

/** The issuer a rule trusts: its own, or for a GitHub rule the configured one. */
export const ruleIssuer = (rule: RuleConditions, githubIssuer: string): string => rule.issuer ?? githubIssuer;
