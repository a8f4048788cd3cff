import type { RestHandler } from '../handler';
import { loadSpec } from '../support/spec';
import { execute } from '../support/execute';
import { WhoamiDocument } from '../../src/generated/rest-operations';
import { contractValues } from '../support/contract-values';

export const whoami: RestHandler<'whoami'> = async (call, ctx) => {
  const { whoami } = await execute(ctx, WhoamiDocument, {});
  call.answer(200, { ...whoami, scopes: contractValues('Scope', whoami.scopes) });
};

/** The document itself: the contract only sketches its shape, so it is sent as read, not as a typed answer. */
export const getOpenApi: RestHandler<'getOpenApi'> = async (call) => {
  call.res.status(200).json(loadSpec());
};
