import type { RequestContext } from './context';
import type { Principal } from '../auth/principal';
import { appAccess, appFilter, authorize } from '../auth/authorize';
import type { BuildDoc } from '../data/builds-repo';
import { buildOrderKey } from '../data/scan-jobs-repo';
import { newId } from '../core/ids';
import { previewFindings, previewPackage, scoreAndGrade, type PreviewMeta } from '../scan';
import { compareScan } from './scan-baseline';
import type { AppDoc } from '../data/apps-repo';
import type { ScanDoc, ScanEngine } from '../data/scans-repo';
import { firstOfMore, keysetConnection, pageSize, resumeAfter, type PageArgs, type ScanConnectionPage } from './pages';

/** A scan of the credential's app (staff: any app); null for an unknown id or another app's scan. */
export async function getScan(ctx: RequestContext, id: string): Promise<ScanDoc | null> {
  const access = authorize(ctx, 'scans:read', { write: false });
  return ctx.repos.scans.findById(appFilter(access), id);
}

/** A scan document with its score and grade computed from its findings (the only place both are derived): suppressed findings cost nothing. */
export function scanDoc(fields: Omit<ScanDoc, 'score' | 'grade'>): ScanDoc {
  return { ...fields, ...scoreAndGrade(fields.findings) };
}

/** How the build was registered, as the preview rules see it; null for a principal that cannot register builds. */
function keyMode(principal: Principal): PreviewMeta['keyMode'] | null {
  switch (principal.kind) {
    case 'api_key':
      return principal.mode;
    case 'oidc':
      return 'oidc';
    case 'staff':
    case 'operator':
    case 'anonymous':
      return null;
  }
}

/** The display name of a scan target: the app's name, or its id when the app has gone. */
export async function appName(ctx: RequestContext, appId: string): Promise<string> {
  return (await ctx.repos.apps.findById(appId))?.name ?? appId;
}

/** The preview scan of a freshly registered build, by its registering caller: rules over what was declared, made synchronously. */
export async function createPreviewScan(ctx: RequestContext, build: BuildDoc): Promise<ScanDoc | null> {
  const mode = keyMode(ctx.principal);
  if (mode === null) return null;
  const findings = previewFindings({
    platform: build.platform,
    version: build.version,
    commit: build.commit,
    artifact: build.artifact && { sizeBytes: build.artifact.sizeBytes, sha256: build.artifact.sha256 },
    keyMode: mode,
    provenance: build.provenance ?? null,
  });
  const target = { platform: build.platform, name: await appName(ctx, build.appId), version: build.version };
  const createdAt = ctx.clock.now();
  // Against the preview of the app's previous release build of the platform (by registration time); previews name
  // no package, so their fingerprints are of the app and platform.
  const compared = await compareScan(
    ctx,
    { appId: build.appId, engine: 'preview', target, build, pkg: previewPackage(build.appId, build.platform), at: createdAt, comparable: true, release: build.release === true },
    findings,
  );
  const doc = scanDoc({
    _id: newId('scn'),
    appId: build.appId,
    buildId: build._id,
    engine: 'preview',
    target,
    ...compared,
    signing: null, // a preview reads no package: nothing is signed yet
    signerContinuity: null,
    createdAt,
  });
  await ctx.repos.scans.insertOnce(doc);
  return doc;
}

/** Queues the static scan of an uploaded artifact as a durable job; a second call for the same build does nothing. */
export async function queueStaticScan(ctx: RequestContext, build: BuildDoc): Promise<boolean> {
  const now = ctx.clock.now();
  return ctx.repos.scanJobs.enqueue({
    _id: newId('job'),
    appId: build.appId,
    buildId: build._id,
    platform: build.platform,
    release: build.release === true,
    buildOrder: buildOrderKey(build),
    state: 'queued',
    attempts: 0,
    leaseUntil: null,
    runAfter: now,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  });
}

/** Scans of the app, newest first, of every engine or of one. */
export async function scansConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { engine?: ScanEngine | null }): Promise<ScanConnectionPage> {
  await appAccess(ctx, 'scans:read', app._id, { write: false });
  const size = pageSize(args.first);
  const engine = args.engine ?? null;
  const kind = 'connection:scans';
  const bound = { appId: app._id, engine };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.scans.page(app._id, engine, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.scans.count(app._id, engine));
}
