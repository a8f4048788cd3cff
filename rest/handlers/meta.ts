import type { Handler } from '../handler';
import { loadSpec } from '../support/spec';
import { execute } from '../support/execute';
import { WhoamiDocument } from '../../src/generated/rest-operations';

export const whoami: Handler = async (_req, res, ctx) => {
  const { whoami } = await execute(ctx, WhoamiDocument, {});
  res.status(200).json(whoami);
};

export const getOpenApi: Handler = async (_req, res) => {
  res.status(200).json(loadSpec());
};
