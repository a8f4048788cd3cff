import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import type { components } from '../../src/generated/openapi';
import { RecordSignerDocument, SignersDocument, type SignerFieldsFragment } from '../../src/generated/rest-operations';

type RestSigner = components['schemas']['SignerRecord'];

const restSigner = (s: SignerFieldsFragment): RestSigner => ({ ...s, recordedAt: new Date(s.recordedAt).toISOString() });

export const listSigners: RestHandler<'listSigners'> = async (call, ctx) => {
  const { signers } = await execute(ctx, SignersDocument, { appId: call.params.id, package: call.query.package ?? null });
  call.answer(200, { data: signers.map(restSigner) });
};

export const recordSigner: RestHandler<'recordSigner'> = async (call, ctx) => {
  const body = call.body;
  const input = {
    package: body.package,
    platform: body.platform ?? null,
    sha256: body.sha256 ?? null,
    teamId: body.teamId ?? null,
    reason: body.reason,
  };
  const { recordSigner } = await execute(ctx, RecordSignerDocument, { appId: call.params.id, input });
  call.answer(201, restSigner(recordSigner));
};
