import type { RequestContext } from './context';
import type { OidcRuleDoc } from '../data/oidc-rules-repo';
import type { ProviderModel } from '../oidc/providers/model';
import { recordAudit } from './audit-service';

/**
 * Pins on first use. A rule written with names only would trust whoever holds the name next: a repository or
 * project deleted and re-created, or an account or group renamed and its old name taken, by someone else. So the
 * first job a rule admits pins the rule to that job's owner id (GitHub `repository_owner_id`, GitLab
 * `namespace_id`) and, when the pattern names one repository or project without `*`, its id (`repository_id`,
 * `project_id`), all verified claims; later jobs must carry the same ids. Providers whose rules name their tenant
 * by id already (Buildkite's organisation, CircleCI's project, Bitbucket's UUIDs) have nothing to pin. Returns the
 * matched rules as they stand after pinning, without those a concurrent job pinned to other ids first.
 */
export async function pinMatchedRules(
  ctx: RequestContext,
  appId: string,
  model: ProviderModel,
  matched: OidcRuleDoc[],
  claims: Readonly<Record<string, unknown>>,
  stillMatches: (rule: OidcRuleDoc) => boolean,
): Promise<OidcRuleDoc[]> {
  const out: OidcRuleDoc[] = [];
  for (const rule of matched) {
    const plan = model.pinsOf(rule, claims);
    const pinProject = plan?.project != null && rule[plan.project.field] == null;
    if (!plan || (rule[plan.owner.field] != null && !pinProject)) {
      out.push(rule);
      continue;
    }
    const { pinned, rule: stored } = await ctx.repos.oidcRules.pinIds(appId, rule._id, plan.owner, pinProject ? plan.project : null);
    if (!stored) continue; // deleted meanwhile
    if (pinned.length > 0) {
      const values: Record<string, string> = {};
      for (const pin of [plan.owner, plan.project]) if (pin && pinned.includes(pin.field)) values[pin.field] = pin.value;
      await recordAudit(ctx, { appId, action: 'oidc.rule_pinned', ruleId: rule._id, details: values });
    }
    if (stillMatches(stored)) out.push(stored);
  }
  return out;
}
