/**
 * Release builds (docs/contract.md, "Release builds"): the only builds whose scans become later builds' baseline and
 * that record or move a package's signer, so that a branch job, or anyone holding an ordinary build key, cannot set
 * what the release is compared with. Decided once, when the build is registered, from the credential that registered
 * it and never from anything the request declares.
 */
import type { RequestContext } from '../context';
import type { BuildProvenance } from '../../oidc/providers/model';

/**
 * While no trust rule of the app says which jobs release, a keyless build is a release build when its job's verified
 * `ref` is the conventional default branch: GitHub's token does not name the repository's default branch, and these
 * two cover almost every repository. A branch or tag job is not one until a rule says so.
 */
export const DEFAULT_RELEASE_REFS: readonly string[] = ['refs/heads/main', 'refs/heads/master'];

/**
 * Whether the build the caller is registering is a release build. An API key: only a key created as a release key
 * (its holder declares nothing a key could not declare falsely). An access token: through a rule with
 * `releaseBuilds`, or, while the app has no such rule, a verified ref of DEFAULT_RELEASE_REFS.
 */
export async function isReleaseBuild(ctx: RequestContext, appId: string, provenance: BuildProvenance | null): Promise<boolean> {
  const principal = ctx.principal;
  if (principal.kind === 'api_key') return (await ctx.repos.apiKeys.findForApp(appId, principal.keyId))?.releaseBuilds === true;
  if (principal.kind !== 'oidc') return false;
  // An app has at most 20 rules: all of them are read to know whether it declared any release rule.
  const releaseRules = (await ctx.repos.oidcRules.listForApp(appId)).filter((r) => r.releaseBuilds === true);
  if (releaseRules.length > 0) return releaseRules.some((r) => principal.ruleIds.includes(r._id));
  // Only where the ref is a trust boundary: GitHub's and GitLab's branches can be protected. A Buildkite, CircleCI
  // or Bitbucket branch is a name anyone who can start a build gives it: their builds are release builds only
  // through a rule with releaseBuilds.
  const provider = provenance?.provider ?? 'github';
  if (!DEFAULT_RELEASE_PROVIDERS.includes(provider)) return false;
  return provenance?.ref != null && DEFAULT_RELEASE_REFS.includes(provenance.ref);
}

const DEFAULT_RELEASE_PROVIDERS: readonly string[] = ['github', 'gitlab'];
