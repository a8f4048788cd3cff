import type { Handler } from '../handler';
import { notFound } from '../../src/core/errors';
import { execute } from '../support/execute';
import { pathParams } from '../support/request';
import type { components } from '../../src/generated/openapi';
import { CreateBuildDocument, CreateUploadUrlDocument, GetBuildDocument, type BuildFieldsFragment } from '../../src/generated/rest-operations';
import { receiveUpload, scansOfBuild, toBuildView, type BuildView } from '../../src/services/builds-service';
import { addressKey } from '../../src/rate-limit/client-address';

type RestBuild = components['schemas']['Build'];
type BuildCreate = components['schemas']['BuildCreate'];

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

export const createBuild: Handler = async (req, res, ctx) => {
  const body = req.body as BuildCreate;
  const { createBuild } = await execute(ctx, CreateBuildDocument, {
    input: { platform: body.platform, version: body.version, commit: body.commit ?? null, artifact: body.artifact ?? null },
  });
  res.status(201).json(toRest(createBuild));
};

export const getBuild: Handler = async (req, res, ctx) => {
  const { build } = await execute(ctx, GetBuildDocument, { id: pathParams(req).id });
  if (!build) throw notFound('Build');
  res.status(200).json(toRest(build));
};

export const createUploadUrl: Handler = async (req, res, ctx) => {
  const { createUploadUrl } = await execute(ctx, CreateUploadUrlDocument, { buildId: pathParams(req).id });
  res.status(200).json(toRest(createUploadUrl));
};

/**
 * The one operation whose input cannot travel through GraphQL: the body is a byte stream. The service streams it
 * into the store; the answer is the same Build view the GraphQL core serves. Any answer given before the body was
 * read to its end closes the connection, so the rest of a large body is not read just to be thrown away.
 */
export const uploadBuildArtifact: Handler = async (req, res, ctx) => {
  try {
    const uploaded = await receiveUpload(ctx, pathParams(req).token, req, addressKey(req.ip ?? 'unknown'));
    const view = await toBuildView(ctx, uploaded);
    const scans = await scansOfBuild(ctx, view);
    res.status(200).json(toRest({ ...view, scans }));
  } catch (error) {
    if (!req.complete) res.setHeader('Connection', 'close');
    throw error;
  }
};
