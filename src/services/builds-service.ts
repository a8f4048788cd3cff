import type { IncomingMessage } from 'node:http';
import type { RequestContext } from './context';
import { appAccess, appFilter, authorize } from '../auth/authorize';
import type { BuildDoc, BuildQuery, Platform } from '../data/builds-repo';
import { DomainError, notFound, validationFailed, type FieldError } from '../core/errors';
import { newId } from '../core/ids';
import { artifactKey } from '../storage/artifact-store';
import { UPLOAD_URL_TTL_MS } from '../uploads/upload-token';
import { receiveUpload } from '../uploads/receive-upload';
import { onArtifactUploaded, onBuildRegistered } from './build-hooks';
import type { BuildProvenance } from '../oidc/providers/model';
import { recordLatestBuild } from './builds/latest-build';
import { isReleaseBuild } from './builds/release';
import type { AppDoc } from '../data/apps-repo';
import { GRADE_BANDS } from '../scan/score';
import { boundDate, firstOfMore, keysetConnection, pageSize, resumeAfter, type BuildConnectionPage, type PageArgs } from './pages';

export { toArtifactView, type ArtifactView } from './builds/view';

export interface CreateBuildInput {
  platform: Platform;
  version: string;
  commit?: string | null;
  artifact?: { sizeBytes: number; sha256: string } | null;
}

/** Spec, Limits: artifacts of 1 byte to 500 MiB. */
export const MAX_ARTIFACT_BYTES = 524_288_000;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A build is registered by an app credential only: staff have no app to register it for. */
function credentialApp(ctx: RequestContext, opts: { write: boolean }): string {
  const access = authorize(ctx, opts.write ? 'builds:write' : 'builds:read', opts);
  if (access.kind !== 'app') throw new DomainError('forbidden', 'Builds are registered and uploaded with an app credential.');
  return access.appId;
}

function validate(input: CreateBuildInput): void {
  const errors: FieldError[] = [];
  if (input.version.length < 1 || input.version.length > 40) errors.push({ pointer: '/version', message: 'must be 1 to 40 characters' });
  if (input.commit != null && input.commit.length > 64) errors.push({ pointer: '/commit', message: 'must be at most 64 characters' });
  const a = input.artifact;
  if (a) {
    if (!Number.isSafeInteger(a.sizeBytes) || a.sizeBytes < 1 || a.sizeBytes > MAX_ARTIFACT_BYTES) {
      errors.push({ pointer: '/artifact/sizeBytes', message: `must be 1 to ${MAX_ARTIFACT_BYTES}` });
    }
    if (!SHA256_HEX.test(a.sha256)) errors.push({ pointer: '/artifact/sha256', message: 'must be 64 lowercase hex characters' });
  }
  if (errors.length) throw validationFailed(errors);
}

async function runHook(ctx: { logger: RequestContext['logger'] }, name: string, hook: () => Promise<void>): Promise<void> {
  try {
    await hook();
  } catch (err) {
    ctx.logger.error({ err, hook: name }, 'build hook failed');
  }
}

/**
 * The verified claims of the CI job behind an access token (recorded at the exchange); null for API keys. An access
 * token always has them (the exchange records them before it answers): a token without (one an instance older than
 * jti-keyed provenance minted, in a rolling deploy) is refused as any invalid credential is, so the client exchanges
 * again, and is never let register a build that would look like an API key's, with no provenance or commit check.
 */
async function provenanceOf(ctx: RequestContext, appId: string, now: Date): Promise<BuildProvenance | null> {
  const principal = ctx.principal;
  if (principal.kind !== 'oidc') return null;
  const provenance = await ctx.repos.tokenProvenance.find(appId, principal.tokenId, now);
  if (!provenance) throw new DomainError('unauthorized', 'A valid credential is required.');
  return provenance;
}

/** Registers a build of the credential's app; with a declared artifact, the artifact is `pending` with an upload URL. */
export async function createBuild(ctx: RequestContext, input: CreateBuildInput): Promise<BuildDoc> {
  const appId = credentialApp(ctx, { write: true });
  validate(input);
  const now = ctx.clock.now();
  const provenance = await provenanceOf(ctx, appId, now);
  const id = newId('bld');
  const doc: BuildDoc = {
    _id: id,
    appId,
    platform: input.platform,
    version: input.version,
    commit: input.commit ?? null,
    status: 'succeeded',
    engine: 'preview',
    createdAt: now,
    artifact: input.artifact
      ? {
          status: 'pending',
          sizeBytes: input.artifact.sizeBytes,
          sha256: input.artifact.sha256,
          storageKey: artifactKey(appId, id),
          uploadUrlExpiresAt: new Date(now.getTime() + UPLOAD_URL_TTL_MS),
          uploadedAt: null,
        }
      : null,
    provenance,
    release: await isReleaseBuild(ctx, appId, provenance),
  };
  await ctx.repos.builds.insert(doc);
  await recordLatestBuild(ctx, doc);
  await runHook(ctx, 'onBuildRegistered', () => onBuildRegistered(ctx, doc));
  return doc;
}

/** A build of the credential's app (staff: any app); null for an unknown id or another app's build. */
export async function getBuild(ctx: RequestContext, id: string): Promise<BuildDoc | null> {
  const access = authorize(ctx, 'builds:read', { write: false });
  return ctx.repos.builds.findById(appFilter(access), id);
}

export async function listBuilds(ctx: RequestContext, appId: string, limit: number): Promise<BuildDoc[]> {
  await appAccess(ctx, 'builds:read', appId, { write: false });
  return ctx.repos.builds.listForApp(appId, Math.min(Math.max(limit, 1), 100));
}

/** A fresh upload URL (15 minutes) while the artifact is pending, so a CI job whose URL expired can resume. */
export async function createUploadUrl(ctx: RequestContext, buildId: string): Promise<BuildDoc> {
  const appId = credentialApp(ctx, { write: true });
  const build = await ctx.repos.builds.findById(appId, buildId);
  if (!build) throw notFound('Build');
  if (!build.artifact || build.artifact.status !== 'pending') {
    throw new DomainError('artifact_not_pending', build.artifact ? 'The artifact is already uploaded.' : 'This build declared no artifact.');
  }
  const updated = await ctx.repos.builds.setUploadUrlExpiry(appId, buildId, new Date(ctx.clock.now().getTime() + UPLOAD_URL_TTL_MS));
  if (!updated) throw new DomainError('artifact_not_pending', 'The artifact is already uploaded.');
  return updated;
}

/**
 * PUT /v1/uploads/{token}: src/uploads receives the bytes (the token is the credential); once the artifact is
 * uploaded, its static scan is queued. The scan's hook runs after the upload lock is released: the artifact is
 * already `uploaded`, so no other upload can start, and a hook that fails is queued again by the owed-scan sweep.
 */
export async function uploadBuildArtifact(ctx: RequestContext, unverifiedToken: string, body: IncomingMessage, clientAddress: string): Promise<BuildDoc> {
  const uploaded = await receiveUpload(ctx, unverifiedToken, body, clientAddress);
  await runHook(ctx, 'onArtifactUploaded', () => onArtifactUploaded(ctx, uploaded));
  return uploaded;
}

export interface BuildFilterInput {
  platform?: string | null;
  version?: string | null;
  grade?: string | null;
  from?: Date | null;
  to?: Date | null;
}

function buildQuery(filter: BuildFilterInput | null | undefined): BuildQuery {
  const f = filter ?? {};
  const errors: FieldError[] = [];
  if (f.platform && f.platform !== 'android' && f.platform !== 'ios') errors.push({ pointer: '/filter/platform', message: 'must be android or ios' });
  if (f.version != null && (f.version.length < 1 || f.version.length > 40)) errors.push({ pointer: '/filter/version', message: 'must be 1 to 40 characters' });
  if (f.grade != null && !GRADE_BANDS.some((b) => b.grade === f.grade)) {
    errors.push({ pointer: '/filter/grade', message: `must be one of ${GRADE_BANDS.map((b) => b.grade).join(', ')}` });
  }
  if (f.from && f.to && f.from >= f.to) errors.push({ pointer: '/filter/to', message: 'must be after from' });
  if (errors.length) throw validationFailed(errors);
  const query: BuildQuery = {};
  if (f.platform) query.platform = f.platform as Platform;
  if (f.version) query.version = f.version;
  if (f.grade) query.grade = f.grade;
  if (f.from) query.from = f.from;
  if (f.to) query.to = f.to;
  return query;
}

/** Builds of the app, newest first, by platform, version, static grade and registration time. */
export async function buildsConnection(ctx: RequestContext, app: AppDoc, args: PageArgs & { filter?: BuildFilterInput | null }): Promise<BuildConnectionPage> {
  await appAccess(ctx, 'builds:read', app._id, { write: false });
  const size = pageSize(args.first);
  const query = buildQuery(args.filter);
  const kind = 'connection:builds';
  const bound = { appId: app._id, ...query, from: boundDate(query.from), to: boundDate(query.to) };
  const after = resumeAfter(ctx, kind, bound, args.after);
  const docs = await ctx.repos.builds.page(app._id, query, size, after);
  return keysetConnection(ctx, { kind, bound, after, ...firstOfMore(docs, size), timeOf: (d) => d.createdAt }, () => ctx.repos.builds.count(app._id, query));
}

/**
 * The newest build of the app (of one platform when given), or null. The app's latest-build summary names it when it
 * is of that platform, so a page of apps loads those builds by id in one batch; otherwise (another platform, an app
 * whose summary is missing or empty) the app's builds are read as the summary cannot tell.
 */
export async function latestBuild(ctx: RequestContext, app: AppDoc, platform: Platform | null): Promise<BuildDoc | null> {
  await appAccess(ctx, 'builds:read', app._id, { write: false });
  const summary = app.latestBuild;
  if (summary && (!platform || platform === summary.platform)) {
    const build = await ctx.loaders.builds.load(summary.id);
    if (build?.appId === app._id) return build;
  }
  return ctx.repos.builds.latest(app._id, platform);
}
