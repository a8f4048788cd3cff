import type { Resolvers, ScanConnectionResolvers, ScanResolvers } from '../src/generated/graphql';
import type { ScanDoc } from '../src/data/scans-repo';
import type { ScanConnectionPage } from '../src/services/pages';
import { getScan } from '../src/services/scans-service';
import { appOf, buildOfApp, connectionFields, type MappedResolvers } from './views';

const scan: MappedResolvers<ScanResolvers, ScanDoc> = {
  id: (s) => s._id,
  app: (s, _a, ctx) => appOf(ctx, s.appId),
  build: (s, _a, ctx) => buildOfApp(ctx, s.appId, s.buildId),
};

const scanConnection: MappedResolvers<ScanConnectionResolvers, ScanConnectionPage> = connectionFields<ScanDoc>();

export const scanResolvers: Resolvers = {
  Query: {
    scan: (_p, { id }, ctx) => getScan(ctx, id),
  },
  Scan: scan,
  ScanConnection: scanConnection,
};
