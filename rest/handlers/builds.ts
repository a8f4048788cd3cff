import type { Handler } from '../handler';
import { notFound } from '../../src/errors';
import { execute, gqlDocument } from '../execute';
import { pathParams } from '../request';
import type { components } from '../../src/generated/openapi';
import type { Build as GqlBuild, CreateBuildInput } from '../../src/generated/graphql';
import { receiveUpload, scansOfBuild, toBuildView } from '../../src/services/builds-service';

type RestBuild = components['schemas']['Build'];
type BuildCreate = components['schemas']['BuildCreate'];

const BUILD_FIELDS = `
  id appId platform version commit status engine createdAt
  artifact { status sizeBytes sha256 uploadUrl uploadUrlExpiresAt }
  scans { id engine grade score }
  provenance { repository repositoryId workflowRef sha ref runId runAttempt eventName runnerEnvironment }
`;

const CREATE_BUILD = gqlDocument<{ createBuild: GqlBuild }, { input: CreateBuildInput }>(
  `mutation CreateBuild($input: CreateBuildInput!) { createBuild(input: $input) { ${BUILD_FIELDS} } }`,
);
const GET_BUILD = gqlDocument<{ build: GqlBuild | null }, { id: string }>(`query GetBuild($id: ID!) { build(id: $id) { ${BUILD_FIELDS} } }`);
const CREATE_UPLOAD_URL = gqlDocument<{ createUploadUrl: GqlBuild }, { buildId: string }>(
  `mutation CreateUploadUrl($buildId: ID!) { createUploadUrl(buildId: $buildId) { ${BUILD_FIELDS} } }`,
);

/** A DateTime from GraphQL (ISO text) or from a service view (Date) -> ISO 8601. */
const iso = (value: Date | string) => new Date(value).toISOString();

/** The fields BUILD_FIELDS selects. */
type SelectedBuild = Omit<GqlBuild, 'app' | 'latestStaticScan' | 'grade'>;

/** GraphQL's nullable upload fields -> the contract's optional ones (present only while pending). */
function toRest(build: SelectedBuild): RestBuild {
  const { artifact, ...rest } = build;
  const restArtifact = artifact && {
    status: artifact.status,
    sizeBytes: artifact.sizeBytes,
    sha256: artifact.sha256,
    ...(artifact.uploadUrl ? { uploadUrl: artifact.uploadUrl } : {}),
    ...(artifact.uploadUrl && artifact.uploadUrlExpiresAt ? { uploadUrlExpiresAt: iso(artifact.uploadUrlExpiresAt) } : {}),
  };
  return { ...rest, provenance: rest.provenance ?? null, commit: rest.commit ?? null, createdAt: iso(rest.createdAt), artifact: restArtifact ?? null } as RestBuild;
}

export const createBuild: Handler = async (req, res, ctx) => {
  const body = req.body as BuildCreate;
  const { createBuild } = await execute(ctx, CREATE_BUILD, {
    input: { platform: body.platform, version: body.version, commit: body.commit ?? null, artifact: body.artifact ?? null },
  });
  res.status(201).json(toRest(createBuild));
};

export const getBuild: Handler = async (req, res, ctx) => {
  const { build } = await execute(ctx, GET_BUILD, { id: pathParams(req).id });
  if (!build) throw notFound('Build');
  res.status(200).json(toRest(build));
};

export const createUploadUrl: Handler = async (req, res, ctx) => {
  const { createUploadUrl } = await execute(ctx, CREATE_UPLOAD_URL, { buildId: pathParams(req).id });
  res.status(200).json(toRest(createUploadUrl));
};

/**
 * The one operation whose input cannot travel through GraphQL: the body is a byte stream. The service streams it
 * into the store; the answer is the same Build view the GraphQL core serves. Any answer given before the body was
 * read to its end closes the connection, so the rest of a large body is not read just to be thrown away.
 */
export const uploadBuildArtifact: Handler = async (req, res, ctx) => {
  try {
    const uploaded = await receiveUpload(ctx, pathParams(req).token, req);
    const view = await toBuildView(ctx, uploaded);
    const scans = await scansOfBuild(ctx, view);
    res.status(200).json(toRest({ ...view, scans }));
  } catch (error) {
    if (!req.complete) res.setHeader('Connection', 'close');
    throw error;
  }
};
