/**
 * Stored documents for staff-schema tests, written straight through the repositories: many builds, scans and threats
 * at chosen times (ties included), which registering them through the API would take minutes to produce.
 */
import { randomBytes } from 'node:crypto';
import { graphql } from 'graphql';
import type { Deps } from '../../src/core/deps';
import type { BuildDoc, Platform } from '../../src/data/builds-repo';
import type { ScanDoc } from '../../src/data/scans-repo';
import type { ThreatDoc } from '../../src/data/threats-repo';
import { newId } from '../../src/core/ids';
import { recordLatestBuild } from '../../src/services/builds/latest-build';
import { GRADE_BANDS } from '../../src/scan/score';
import { createContext } from '../../src/services/context';
import { authenticateApiRequest } from '../../src/auth/authenticate';
import type { Principal } from '../../src/auth/principal';
import { operatorContext } from '../../src/services/operator-context';

export async function seedBuild(
  deps: Deps,
  appId: string,
  fields: { createdAt: Date; platform?: Platform; version?: string; grade?: string },
): Promise<BuildDoc> {
  const doc: BuildDoc = {
    _id: newId('bld'),
    appId,
    platform: fields.platform ?? 'android',
    version: fields.version ?? '1.0.0',
    commit: null,
    status: 'succeeded',
    engine: 'preview',
    createdAt: fields.createdAt,
    artifact: null,
    provenance: null,
    ...(fields.grade ? { grade: fields.grade } : {}),
  };
  await deps.repos.builds.insert(doc);
  await recordLatestBuild(operatorContext(deps, null), doc); // as build registration does
  return doc;
}

export async function seedScan(deps: Deps, build: BuildDoc, fields: { engine: 'preview' | 'static'; grade: string; createdAt: Date }): Promise<ScanDoc> {
  const doc: ScanDoc = {
    _id: newId('scn'),
    appId: build.appId,
    buildId: build._id,
    engine: fields.engine,
    grade: fields.grade,
    score: GRADE_BANDS.find((b) => b.grade === fields.grade)?.min ?? 0,
    target: { platform: build.platform, name: 'test app', version: build.version },
    findings: [],
    createdAt: fields.createdAt,
  };
  await deps.repos.scans.insertOnce(doc);
  return doc;
}

export async function seedThreat(deps: Deps, appId: string, fields: { occurredAt: Date; buildId?: string | null; detection?: ThreatDoc['detection'] }): Promise<ThreatDoc> {
  const doc: ThreatDoc = {
    _id: `thr_${randomBytes(12).toString('hex')}`,
    appId,
    mergeKey: randomBytes(8).toString('hex'),
    generation: 0,
    deviceHash: randomBytes(8).toString('hex'),
    detection: fields.detection ?? 'hooking',
    verdict: 'compromised',
    confidence: 0.9,
    action: 'block',
    signals: ['frida'],
    platform: 'android',
    appVersion: '1.0.0',
    buildId: fields.buildId ?? null,
    occurredAt: fields.occurredAt,
    lastOccurredAt: fields.occurredAt,
    windowEnd: new Date(fields.occurredAt.getTime() + 300_000),
    count: 1,
    receivedAt: fields.occurredAt,
  };
  await deps.repos.threats.insertWindow(doc);
  return doc;
}

/** Runs a document in process as the REST facade does: with any principal (an app credential's, here). */
export async function executeAs(deps: Deps, principal: Principal, source: string, variableValues?: Record<string, unknown>) {
  return graphql({ schema: deps.schema, source, variableValues, contextValue: createContext(deps, principal) });
}

export async function appPrincipal(deps: Deps, key: string): Promise<Principal> {
  const auth = await authenticateApiRequest(deps, `Bearer ${key}`);
  if (!auth.ok) throw new Error('the key did not authenticate');
  return auth.principal;
}
