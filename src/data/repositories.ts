import type { Db } from 'mongodb';
import { AppsRepo } from './apps-repo';
import { ApiKeysRepo } from './api-keys-repo';
import { StaffRepo } from './staff-repo';
import { SigningKeysRepo } from './signing-keys-repo';
import { IdempotencyRepo } from './idempotency-repo';
import { AuditRepo } from './audit-repo';
import { BuildsRepo } from './builds-repo';
import { UploadLocksRepo } from './upload-locks-repo';
import { OidcRulesRepo } from './oidc-rules-repo';
import { JtiRepo } from './jti-repo';
import { TokenProvenanceRepo } from './token-provenance-repo';
import { ScansRepo } from './scans-repo';
import { ScanJobsRepo } from './scan-jobs-repo';
import { SignersRepo } from './signers-repo';
import { ThreatsRepo } from './threats-repo';
import { ThreatMergesRepo } from './threat-merges-repo';
import { ThreatEventIdsRepo } from './threat-event-ids-repo';
import { WebhooksRepo } from './webhooks-repo';
import { WebhookDeliveriesRepo } from './webhook-deliveries-repo';
import { WebhookSpikesRepo } from './webhook-spikes-repo';
import { SuppressionsRepo } from './suppressions-repo';
import { AttestationConfigsRepo } from './attestation-configs-repo';
import { AttestChallengesRepo } from './attest-challenges-repo';
import { AppAttestKeysRepo } from './app-attest-keys-repo';
import { AttestVerdictCountsRepo } from './attest-verdict-counts-repo';

/** One repository per collection. Each owns its collection name, document type, indexes and app filter. */
export interface Repositories {
  apps: AppsRepo;
  apiKeys: ApiKeysRepo;
  staff: StaffRepo;
  signingKeys: SigningKeysRepo;
  idempotency: IdempotencyRepo;
  audit: AuditRepo;
  oidcRules: OidcRulesRepo;
  jtis: JtiRepo;
  tokenProvenance: TokenProvenanceRepo;
  builds: BuildsRepo;
  uploadLocks: UploadLocksRepo;
  scans: ScansRepo;
  scanJobs: ScanJobsRepo;
  signers: SignersRepo;
  threats: ThreatsRepo;
  threatMerges: ThreatMergesRepo;
  threatEventIds: ThreatEventIdsRepo;
  webhooks: WebhooksRepo;
  webhookDeliveries: WebhookDeliveriesRepo;
  webhookSpikes: WebhookSpikesRepo;
  suppressions: SuppressionsRepo;
  attestationConfigs: AttestationConfigsRepo;
  attestChallenges: AttestChallengesRepo;
  appAttestKeys: AppAttestKeysRepo;
  attestVerdictCounts: AttestVerdictCountsRepo;
  /** The keys that sign attestation verdict tokens (GET /v1/attest/jwks). */
  attestSigningKeys: SigningKeysRepo;
}

export function createRepositories(db: Db): Repositories {
  return {
    apps: new AppsRepo(db),
    apiKeys: new ApiKeysRepo(db),
    staff: new StaffRepo(db),
    signingKeys: new SigningKeysRepo(db),
    idempotency: new IdempotencyRepo(db),
    audit: new AuditRepo(db),
    oidcRules: new OidcRulesRepo(db),
    jtis: new JtiRepo(db),
    tokenProvenance: new TokenProvenanceRepo(db),
    builds: new BuildsRepo(db),
    uploadLocks: new UploadLocksRepo(db),
    scans: new ScansRepo(db),
    scanJobs: new ScanJobsRepo(db),
    signers: new SignersRepo(db),
    threats: new ThreatsRepo(db),
    threatMerges: new ThreatMergesRepo(db),
    threatEventIds: new ThreatEventIdsRepo(db),
    webhooks: new WebhooksRepo(db),
    webhookDeliveries: new WebhookDeliveriesRepo(db),
    webhookSpikes: new WebhookSpikesRepo(db),
    suppressions: new SuppressionsRepo(db),
    attestationConfigs: new AttestationConfigsRepo(db),
    attestChallenges: new AttestChallengesRepo(db),
    appAttestKeys: new AppAttestKeysRepo(db),
    attestVerdictCounts: new AttestVerdictCountsRepo(db),
    attestSigningKeys: new SigningKeysRepo(db, SigningKeysRepo.attestCollectionName),
  };
}

export async function ensureAllIndexes(repos: Repositories): Promise<void> {
  for (const repo of Object.values(repos)) await repo.ensureIndexes();
}
