import type { Handler } from '../handler';
import { notFound } from '../../src/errors';
import { execute } from '../execute';
import { pathParams } from '../request';
import type { components } from '../../src/generated/openapi';
import { GetScanDocument } from '../../src/generated/rest-operations';

type RestScan = components['schemas']['Scan'];

export const getScan: Handler = async (req, res, ctx) => {
  const { scan } = await execute(ctx, GetScanDocument, { id: pathParams(req).id });
  if (!scan) throw notFound('Scan');
  const body: RestScan = {
    ...scan,
    target: { ...scan.target, version: scan.target.version ?? null },
    createdAt: new Date(scan.createdAt).toISOString(),
  };
  res.status(200).json(body);
};
