import type { RequestContext } from '../context';
import type { BuildDoc } from '../../data/builds-repo';

/**
 * Keeps the app's summary of its newest build, which dashboards read instead of finding each app's newest build.
 * Written after the build is stored: a crash in between leaves the summary on the previous build until the next one.
 */
export async function recordLatestBuild(ctx: RequestContext, build: BuildDoc): Promise<void> {
  await ctx.repos.apps.recordLatestBuild(build.appId, { id: build._id, createdAt: build.createdAt, platform: build.platform, grade: build.grade ?? null });
}

/** Copies a static scan's grade onto its build (builds listed by grade) and onto its app's summary if still the latest. */
export async function recordStaticGrade(ctx: RequestContext, scan: { appId: string; buildId: string; grade: string }): Promise<void> {
  await ctx.repos.builds.setGrade(scan.appId, scan.buildId, scan.grade);
  await ctx.repos.apps.setLatestBuildGrade(scan.appId, scan.buildId, scan.grade);
}
