import type { Handler } from '../handler';
import { execute } from '../support/execute';
import { pathParams, queryParams } from '../support/request';
import type { components } from '../../src/generated/openapi';
import { RecordSignerDocument, SignersDocument, type SignerFieldsFragment } from '../../src/generated/rest-operations';

type RestSigner = components['schemas']['SignerRecord'];
type SignerCreate = components['schemas']['SignerCreate'];

const restSigner = (s: SignerFieldsFragment): RestSigner => ({ ...s, recordedAt: new Date(s.recordedAt).toISOString() });

export const listSigners: Handler = async (req, res, ctx) => {
  const query = queryParams<{ package?: string }>(req);
  const { signers } = await execute(ctx, SignersDocument, { appId: pathParams(req).id, package: query.package ?? null });
  res.status(200).json({ data: signers.map(restSigner) });
};

export const recordSigner: Handler = async (req, res, ctx) => {
  const body = req.body as SignerCreate;
  const input = {
    package: body.package,
    platform: body.platform ?? null,
    sha256: body.sha256 ?? null,
    teamId: body.teamId ?? null,
    reason: body.reason,
  };
  const { recordSigner } = await execute(ctx, RecordSignerDocument, { appId: pathParams(req).id, input });
  res.status(201).json(restSigner(recordSigner));
};
