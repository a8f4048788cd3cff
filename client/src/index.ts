/** shieldgate-ci as a library: the typed REST client and the steps the command is made of. */
export { createApiClient, call, type ApiClient, type Build, type Scan, type Finding, type Whoami, type CredentialSource } from './api';
export { apiKeyCredential, ciOidcCredential, githubOidcCredential, resolveCredential, ExchangeRefused } from './credentials';
export { detectProvider, PROVIDERS, DEFAULT_ID_TOKEN_VAR, type CiProvider, type TokenOptions } from './providers/detect';
export { decodeRuleClaims, suggestRule, refusalReport } from './claims';
export { digestFile, type FileDigest } from './file-digest';
export { uploadArtifact } from './upload';
export { createProgress } from './progress';
export { waitForStaticScan, getBuild, getScan } from './wait';
export { evaluateGate, newFindingsGated, type GateResult, type GateOptions, type GateName } from './gate';
export { comparisonOf, findingSections, type ComparedScan, type ComparedFinding, type Comparison, type FindingSections, type FindingRef, type FindingSuppression } from './baseline';
export { SEVERITIES, isSeverity, atOrAbove, type Severity } from './severities';
export { findingsReport, summaryMarkdown } from './report';
export { GRADES, gradeBelow, isGrade, type Grade } from './grades';
export { toSarif, fingerprint, DEFAULT_MANIFEST, SERVICE_FINGERPRINT_KEY } from './sarif';
export { resolveCommit, detectCommit, repositoryHead, idempotencyKey, CI_COMMIT_VARIABLES, KNOWN_COMMIT_VARIABLES, type DetectedCommit } from './commit';
export { CliError, ServiceError, EXIT } from './errors';
export { main } from './cli';
export type { paths, components } from './generated/openapi';
