import type { AppResolvers, Resolvers, SignerRecord } from '../src/generated/graphql';
import type { AppDoc } from '../src/data/apps-repo';
import type { SignerDoc } from '../src/data/signers-repo';
import type { RequestContext } from '../src/services/context';
import { listSigners, recordSigner } from '../src/services/signers-service';

/** Document -> GraphQL object: the comparison key and the rotation mark stay inside. */
export const toSignerRecord = (doc: SignerDoc): SignerRecord => ({
  platform: doc.platform,
  package: doc.package,
  sha256: doc.sha256,
  teamId: doc.teamId,
  source: doc.source,
  scanId: doc.scanId,
  reason: doc.reason,
  recordedAt: doc.recordedAt,
});

export const signerResolvers: Resolvers = {
  Query: {
    signers: async (_p, { appId, package: pkg }, ctx) => (await listSigners(ctx, appId, pkg ?? null)).map(toSignerRecord),
  },
  Mutation: {
    recordSigner: async (_p, { appId, input }, ctx) => toSignerRecord(await recordSigner(ctx, appId, input)),
  },
  // An Android signature lists its schemes; an iOS seal names a team (src/scan/types.ts).
  ScanSigning: {
    __resolveType: (signing) => ('schemes' in signing ? 'AndroidSigning' : 'IosSigning'),
  },
};

/** App.signers: the same list as Query.signers, for the app in hand. */
export const appSignerFields: Required<Pick<AppResolvers<RequestContext, AppDoc>, 'signers'>> = {
  signers: async (a, { package: pkg }, ctx) => (await listSigners(ctx, a._id, pkg ?? null)).map(toSignerRecord),
};
