import type { Handler } from '../handler';
import { notFound } from '../../src/errors';
import { execute, gqlDocument } from '../execute';
import { pathParams } from '../request';
import type { components } from '../../src/generated/openapi';
import type { Scan as GqlScan } from '../../src/generated/graphql';

type RestScan = components['schemas']['Scan'];

const GET_SCAN = gqlDocument<{ scan: GqlScan | null }, { id: string }>(
  `query GetScan($id: ID!) {
    scan(id: $id) {
      id appId engine grade score createdAt
      target { platform name version }
      findings { id severity title detail fix }
    }
  }`,
);

export const getScan: Handler = async (req, res, ctx) => {
  const { scan } = await execute(ctx, GET_SCAN, { id: pathParams(req).id });
  if (!scan) throw notFound('Scan');
  const body: RestScan = {
    ...scan,
    target: { ...scan.target, version: scan.target.version ?? null },
    createdAt: new Date(scan.createdAt).toISOString(),
  } as RestScan;
  res.status(200).json(body);
};
