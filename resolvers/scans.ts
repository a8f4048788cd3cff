import type { AppResolvers, Resolvers, ScanConnectionResolvers, ScanResolvers } from '../src/generated/graphql';
import type { RequestContext } from '../src/services/context';
import type { AppDoc } from '../src/data/apps-repo';
import type { ScanDoc } from '../src/data/scans-repo';
import type { ScanConnectionPage } from '../src/services/pages';
import { getScan, scansConnection } from '../src/services/scans-service';
import { appOf, buildOfApp, connectionFields, type MappedResolvers } from './views';

/** The App's scans. */
export const appScanFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'scans'>> = {
  scans: (a, args, ctx) => scansConnection(ctx, a, args),
};

const scan: MappedResolvers<ScanResolvers, ScanDoc> = {
  id: (s) => s._id,
  app: (s, _a, ctx) => appOf(ctx, s.appId),
  build: (s, _a, ctx) => buildOfApp(ctx, s.appId, s.buildId),
  // Scans stored before baselines existed were never compared: null and empty, never a guess.
  baseline: (s) => s.baseline ?? null,
  diff: (s) => s.diff ?? null,
  fixedFindings: (s) => s.fixedFindings ?? [],
  unsuppressed: (s) => s.unsuppressed ?? [],
  signerContinuity: (s) => s.signerContinuity ?? null,
};

const scanConnection: MappedResolvers<ScanConnectionResolvers, ScanConnectionPage> = connectionFields<ScanDoc>();

export const scanResolvers: Resolvers = {
  Query: {
    scan: (_p, { id }, ctx) => getScan(ctx, id),
  },
  Scan: scan,
  ScanConnection: scanConnection,
};
