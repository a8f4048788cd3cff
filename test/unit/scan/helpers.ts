import { analyzePackage, type StaticAnalysis } from '../../../src/scan/static/analyze-package';
import type { Finding } from '../../../src/scan/model/types';
import { androidManifest, testIosAnchors } from '../../fixtures/build-packages';

/** A fixed clock so certificate and profile expiry do not depend on when the tests run. */
export const NOW = new Date('2026-01-15T12:00:00Z');

/** Application attributes of a package that should raise no manifest finding. */
export const SAFE_APP = { 'android:allowBackup': 'false' };

/** A manifest with no findings of its own; override pieces per test. */
export function manifest(opts: Parameters<typeof androidManifest>[0] = {}): string {
  return androidManifest({ minSdk: 26, targetSdk: 36, ...opts, application: { ...SAFE_APP, ...opts.application } });
}

/**
 * Analyses a package at NOW. An iOS bundle's signer is checked against the test CA that signs the fixtures
 * (testIosAnchors) in place of Apple's CAs, which the service uses and test/unit/scan/ios-signer-chain.test.ts covers.
 */
export async function scan(file: string, platform: 'android' | 'ios' = 'android', now = NOW): Promise<StaticAnalysis> {
  return analyzePackage(file, platform, { now, iosTrustAnchors: platform === 'ios' ? await testIosAnchors() : undefined });
}

export function ids(r: StaticAnalysis): string[] {
  return r.findings.map((f) => f.id);
}

export function only(r: StaticAnalysis, id: string): Finding {
  const found = r.findings.filter((f) => f.id === id);
  if (found.length !== 1) throw new Error(`expected one ${id}, got ${JSON.stringify(ids(r))}`);
  return found[0];
}

/** Every finding must be complete enough to act on. */
export function expectWellFormed(r: StaticAnalysis): void {
  for (const f of r.findings) {
    expect(f.id).toMatch(/^[a-z]+\.[a-z0-9-]+$/);
    expect(['low', 'medium', 'high', 'critical']).toContain(f.severity);
    expect(f.title.length).toBeGreaterThan(5);
    expect(f.detail.length).toBeGreaterThan(20);
    expect(f.fix.length).toBeGreaterThan(20);
  }
}
