import type { RestHandler } from '../handler';
import { notFound } from '../../src/core/errors';
import { execute } from '../support/execute';
import { contractValue } from '../support/contract-values';
import type { components } from '../../src/generated/openapi';
import { CreateBuildDocument, CreateUploadUrlDocument, GetBuildDocument, type BuildFieldsFragment } from '../../src/generated/rest-operations';
import { uploadBuildArtifact as receiveArtifact } from '../../src/services/builds-service';
import { createContext } from '../../src/services/context';
import { addressKey } from '../../src/rate-limit/client-address';

type RestBuild = components['schemas']['Build'];

/** A DateTime as GraphQL serializes it -> ISO 8601 as the contract writes it. */
const iso = (value: string) => new Date(value).toISOString();

/** The one REST Build. GraphQL's nullable upload fields -> the contract's optional ones (present only while pending). */
function toRest(build: BuildFieldsFragment): RestBuild {
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
  const provenance = rest.provenance && { ...rest.provenance, provider: contractValue('CiProvider', rest.provenance.provider) };
  return { ...rest, engine, provenance: provenance ?? null, commit: rest.commit ?? null, createdAt: iso(rest.createdAt), artifact: restArtifact ?? null };
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
 * The one operation whose input cannot travel through GraphQL: the body is a byte stream. The builds service has it
 * received into the store (src/uploads/receive-upload.ts); the answer is the build read through GetBuild, like every
 * other Build answer. Any answer given before the body was read to its end closes the connection, so the rest of a
 * large body is not read just to be thrown away.
 */
export const uploadBuildArtifact: RestHandler<'uploadBuildArtifact'> = async (call, ctx) => {
  const { req } = call;
  let uploaded;
  try {
    uploaded = await receiveArtifact(ctx, call.params.token, req, addressKey(req.ip ?? 'unknown'));
  } catch (error) {
    if (!req.complete) call.res.setHeader('Connection', 'close');
    throw error;
  }
  // The request carries no credential: the verified upload token proved the right to this one build. It is read as
  // the service reads its own builds (the operator), by the id the token named; no upload URL is shown for an
  // uploaded artifact whoever reads it.
  const reader = createContext(ctx.deps, { kind: 'operator', user: null }, ctx.requestId, ctx.logger);
  const { build } = await execute(reader, GetBuildDocument, { id: uploaded._id });
  if (!build) throw notFound('Build');
  call.answer(200, toRest(build));
};
