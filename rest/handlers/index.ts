import type { RestHandlers } from '../handler';
import { bindAll } from '../support/bind-handlers';
import { getOpenApi, whoami } from './meta';
import * as builds from './builds';
import * as scans from './scans';
import * as threats from './threats';
import * as events from './events';
import * as attest from './attest';
import * as oidcExchange from './oidc-exchange';
import * as oidcRules from './oidc-rules';
import * as auditEvents from './audit-events';
import * as webhooks from './webhooks';
import * as signers from './signers';
import * as suppressions from './suppressions';

/** Every operation of the contract has its handler, typed by it: a missing or mistyped one is a compile error. */
export const handlers = bindAll({
  whoami,
  getOpenApi,
  createBuild: builds.createBuild,
  getBuild: builds.getBuild,
  createUploadUrl: builds.createUploadUrl,
  uploadBuildArtifact: builds.uploadBuildArtifact,
  getScan: scans.getScan,
  getScanSbom: scans.getScanSbom,
  listThreats: threats.listThreats,
  exportThreats: threats.exportThreats,
  ingestEvents: events.ingestEvents,
  verifyAttest: attest.verifyAttest,
  createAttestChallenge: attest.createAttestChallenge,
  getAttestJwks: attest.getAttestJwks,
  getAttestationConfig: attest.getAttestationConfig,
  configureAttestation: attest.configureAttestation,
  exchangeOidcToken: oidcExchange.exchangeOidcToken,
  createOidcRule: oidcRules.createOidcRule,
  listOidcRules: oidcRules.listOidcRules,
  deleteOidcRule: oidcRules.deleteOidcRule,
  dryRunOidcRules: oidcRules.dryRunOidcRules,
  listAuditEvents: auditEvents.listAuditEvents,
  createWebhook: webhooks.createWebhook,
  listWebhooks: webhooks.listWebhooks,
  deleteWebhook: webhooks.deleteWebhook,
  listSigners: signers.listSigners,
  recordSigner: signers.recordSigner,
  createSuppression: suppressions.createSuppression,
  listSuppressions: suppressions.listSuppressions,
  deleteSuppression: suppressions.deleteSuppression,
} satisfies RestHandlers);
