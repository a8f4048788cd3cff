import type { RestHandler } from '../handler';
import { notFound } from '../../src/core/errors';
import { execute } from '../support/execute';
import type { components } from '../../src/generated/openapi';
import { CreateBuildDocument, CreateUploadUrlDocument, GetBuildDocument, type BuildFieldsFragment } from '../../src/generated/rest-operations';
import { receiveUpload, scansOfBuild, toBuildView, type BuildView } from '../../src/services/builds-service';
import { addressKey } from '../../src/rate-limit/client-address';

type RestBuild = components['schemas']['Build'];

/** What the REST Build is made from: the BuildFields of a GraphQL answer, or the upload's own service view. */
type BuildSource = BuildFieldsFragment | (BuildView & { scans: BuildFieldsFragment['scans'] });

/** A DateTime from GraphQL (ISO text) or from a service view (Date) -> ISO 8601. */
const iso = (value: Date | string) => new Date(value).toISOString();

/** GraphQL's nullable upload fields -> the contract's optional ones (present only while pending). */
function toRest(build: BuildSource): RestBuild {
  const { artifact, engine, ...rest } = build;
  // The schema types engine as a String; the contract knows one value, and a build of any other is a server bug.
  if (engine !== 'preview') throw new Error(`build ${build.id} has engine ${engine}, which the REST contract does not know`);
  const restArtifact = artifact && {
    status: artifact.status,
    sizeBytes: artifact.sizeBytes,
    sha256: artifact.sha256,
    ...(artifact.uploadUrl ? { uploadUrl: artifact.uploadUrl } : {}),
    ...(artifact.uploadUrl && artifact.uploadUrlExpiresAt ? { uploadUrlExpiresAt: iso(artifact.uploadUrlExpiresAt) } : {}),
  };
  return { ...rest, engine, provenance: rest.provenance ?? null, commit: rest.commit ?? null, createdAt: iso(rest.createdAt), artifact: restArtifact ?? null };
}

export const createBuild: RestHandler<'createBuild'> = async (call, ctx) => {
  const body = call.body;
  const { createBuild } = await execute(ctx, CreateBuildDocument, {
    input: { platform: body.platform, version: body.version, commit: body.commit ?? null, artifact: body.artifact ?? null },
  });
  call.answer(201, toRest(createBuild));
};

export const getBuild: RestHandler<'getBuild'> = async (call, ctx) => {
  const { build } = await execute(ctx, GetBuildDocument, { id: call.params.id });
  if (!build) throw notFound('Build');
  call.answer(200, toRest(build));
};

export const createUploadUrl: RestHandler<'createUploadUrl'> = async (call, ctx) => {
  const { createUploadUrl } = await execute(ctx, CreateUploadUrlDocument, { buildId: call.params.id });
  call.answer(200, toRest(createUploadUrl));
};

/**
 * The one operation whose input cannot travel through GraphQL: the body is a byte stream. The service streams it
 * into the store; the answer is the same Build view the GraphQL core serves. Any answer given before the body was
 * read to its end closes the connection, so the rest of a large body is not read just to be thrown away.
 */
export const uploadBuildArtifact: RestHandler<'uploadBuildArtifact'> = async (call, ctx) => {
  const { req } = call;
  try {
    const uploaded = await receiveUpload(ctx, call.params.token, req, addressKey(req.ip ?? 'unknown'));
    const view = await toBuildView(ctx, uploaded);
    const scans = await scansOfBuild(ctx, view);
    call.answer(200, toRest({ ...view, scans }));
  } catch (error) {
    if (!req.complete) call.res.setHeader('Connection', 'close');
    throw error;
  }
};
