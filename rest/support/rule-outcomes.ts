import type { components } from '../../src/generated/openapi';
import { contractMember } from './contract-values';

type RestRuleOutcome = components['schemas']['RuleOutcome'];

/** A RuleOutcome as the GraphQL documents select it (id matched failed { check expected actual }). */
interface RuleOutcomeSource {
  id: string;
  matched: boolean;
  failed: { check: string; expected: string; actual: string | null } | null;
}

/**
 * The one REST RuleOutcome (a dry run's rules, an audit event's): GraphQL's String check -> the contract's FailedCheck
 * enum.
 */
export function toRestRuleOutcome(rule: RuleOutcomeSource): RestRuleOutcome {
  return { ...rule, failed: rule.failed && { ...rule.failed, check: contractMember('FailedCheck', 'check', rule.failed.check) } };
}
