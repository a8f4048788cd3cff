import type { Resolvers } from '../src/generated/graphql';
import { DateTime } from './scalars';
import { appResolvers } from './apps';
import { keyResolvers } from './keys';
import { whoamiResolvers } from './whoami';
import { auditEventResolvers } from './audit-events';
import { oidcRuleResolvers } from './oidc-rules';
import { oidcExchangeResolvers } from './oidc-exchange';
import { buildResolvers } from './builds';
import { scanResolvers } from './scans';
import { threatResolvers } from './threats';
import { eventResolvers } from './events';
import { attestResolvers } from './attest';
import { webhookResolvers } from './webhooks';
import { staffResolvers } from './staff';
import { dashboardResolvers } from './dashboards';
import { nodeResolvers } from './nodes';
import { signerResolvers } from './signers';
import { suppressionResolvers } from './suppressions';

/**
 * Every domain's resolvers, as the typed parts makeExecutableSchema merges per type (src/graphql/schema.ts).
 * Resolvers read arguments and context, call a service, return.
 */
export const resolvers: Resolvers[] = [
  { DateTime, Query: { ping: () => true } },
  appResolvers,
  keyResolvers,
  whoamiResolvers,
  auditEventResolvers,
  buildResolvers,
  oidcRuleResolvers,
  oidcExchangeResolvers,
  scanResolvers,
  threatResolvers,
  eventResolvers,
  attestResolvers,
  webhookResolvers,
  staffResolvers,
  dashboardResolvers,
  nodeResolvers,
  signerResolvers,
  suppressionResolvers,
];
