import type { Handler } from '../handler';
import { loadSpec } from '../spec';
import { execute, gqlDocument } from '../execute';
import type { Whoami } from '../../src/generated/graphql';

const WHOAMI = gqlDocument<{ whoami: Whoami }>(`query Whoami { whoami { appId plan scopes auth expiresAt } }`);

export const whoami: Handler = async (_req, res, ctx) => {
  const { whoami } = await execute(ctx, WHOAMI, {});
  res.status(200).json(whoami);
};

export const getOpenApi: Handler = async (_req, res) => {
  res.status(200).json(loadSpec());
};
