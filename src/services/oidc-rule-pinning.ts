import type { RequestContext } from './context';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import { evaluateRules } from '../oidc/rule-evaluator';
import { parsePattern } from '../oidc/subject';
import { recordAudit } from './audit-service';

/**
 * Pins on first use. A rule written with names only would trust whoever holds the name next: a repository deleted
 * and re-created, or an account renamed and its old name taken, by someone else. So the first job a rule admits pins
 * the rule to that job's `repository_owner_id` and (when the pattern names one repository, without `*`) its
 * `repository_id`, both verified claims; later jobs must carry the same ids. Returns the matched rules as they stand
 * after pinning, without those a concurrent job pinned to other ids first.
 */
export async function pinMatchedRules(ctx: RequestContext, appId: string, matched: OidcRuleDoc[], claims: Readonly<Record<string, unknown>>): Promise<OidcRuleDoc[]> {
  const ownerId = typeof claims.repository_owner_id === 'string' ? claims.repository_owner_id : null;
  const repositoryId = typeof claims.repository_id === 'string' ? claims.repository_id : null;
  if (ownerId === null) return matched; // GitHub always sends it; nothing to pin to otherwise
  const out: OidcRuleDoc[] = [];
  for (const rule of matched) {
    const pinRepository = rule.repositoryId === null && repositoryId !== null && !(parsePattern(rule.subjectPattern)?.repo.includes('*') ?? true);
    if (rule.repositoryOwnerId !== null && !pinRepository) {
      out.push(rule);
      continue;
    }
    const { pinned, rule: stored } = await ctx.repos.oidcRules.pinIds(appId, rule._id, {
      ...(pinRepository ? { repositoryId: repositoryId! } : {}),
      repositoryOwnerId: ownerId,
    });
    if (!stored) continue; // deleted meanwhile
    if (pinned.length > 0) {
      await recordAudit(ctx, {
        appId,
        action: 'oidc.rule_pinned',
        ruleId: rule._id,
        details: { ...(pinned.includes('repositoryId') ? { repositoryId: repositoryId! } : {}), ...(pinned.includes('repositoryOwnerId') ? { repositoryOwnerId: ownerId } : {}) },
      });
    }
    if (evaluateRules([stored], claims).matched.length > 0) out.push(stored);
  }
  return out;
}
