import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { VerifyAttestDocument } from '../../src/generated/rest-operations';

export const verifyAttest: RestHandler<'verifyAttest'> = async (call, ctx) => {
  const body = call.body;
  const { verifyAttest } = await execute(ctx, VerifyAttestDocument, { input: { token: body.token, nonce: body.nonce, platform: body.platform } });
  call.answer(200, { valid: verifyAttest.valid, verdict: verifyAttest.verdict, reasons: verifyAttest.reasons, engine: 'stub' });
};
