/**
 * Later builds of the risky package, made the way a team makes them: real APKs (aapt, apksigner) uploaded over REST
 * and scanned, and suppressions created over REST with a rules:write key. The second build fixes a finding and adds
 * one while a suppression accepts another; the third comes after that suppression expired, so the finding is back.
 */
import type { Harness } from '../support/harness';
import { json } from '../support/harness';
import { androidManifest, buildApk } from '../fixtures/build-packages';
import { getScan, uploadPackage, waitForStaticScan } from '../integration/scans-support';

/** The package every risky build is of: its scans are compared with each other, not with the clean package's. */
export const RISKY_PACKAGE = 'com.acme.banking';

const DAY = 86_400_000;
const READ_SMS = 'android.permission.READ_SMS';

export interface SeededBaselines {
  /** 2.4.2: compared with 2.4.1, while both suppressions apply. */
  next: string;
  /** 2.4.3: compared with 2.4.2, after the rule-wide suppression expired. */
  back: string;
  /** Accepts every android.allow-backup finding for a day (expired by the time 2.4.3 is scanned). */
  expiring: string;
  /** Accepts the one READ_SMS special-permission finding by its fingerprint, for 300 days. */
  sms: string;
}

/** The risky manifest at a version: 2.4.1 debuggable; later ones not debuggable, with cleartext traffic. */
export function riskyManifest(version: string): string {
  const first = version === '2.4.1';
  return androidManifest({
    packageName: RISKY_PACKAGE,
    versionName: version,
    minSdk: 21,
    targetSdk: 34,
    application: first ? { 'android:debuggable': 'true', 'android:allowBackup': 'true' } : { 'android:allowBackup': 'true', 'android:usesCleartextTraffic': 'true' },
    body: '<activity android:name=".Main" android:exported="true"/>',
    manifestExtra: `<uses-permission android:name="android.permission.CAMERA"/><uses-permission android:name="${READ_SMS}"/>`,
  });
}

async function suppress(h: Harness, appId: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await h.api(`/v1/apps/${appId}/suppressions`, { method: 'POST', headers: json(key), body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`createSuppression answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** After 2.4.1 (`firstScanId`) is scanned: the suppressions, 2.4.2 scanned, two days later 2.4.3 scanned. */
export async function seedBaselines(h: Harness, appId: string, keys: { ci: string; rules: string }, firstScanId: string): Promise<SeededBaselines> {
  const first = await getScan(h, keys.ci, firstScanId);
  const sms = (first.body.findings as Array<{ id: string; detail: string; fingerprint: string }>).find((f) => f.id === 'android.permission-special' && f.detail.includes(READ_SMS));
  if (!sms) throw new Error(`2.4.1 has no READ_SMS finding: ${JSON.stringify(first.body.findings.map((f: { id: string }) => f.id))}`);
  const now = h.clock.now().getTime();
  const expiring = await suppress(h, appId, keys.rules, { findingId: 'android.allow-backup', reason: 'Backups hold no secret until 2.5 moves the token store', expiresAt: new Date(now + DAY).toISOString() });
  const smsId = await suppress(h, appId, keys.rules, {
    findingId: 'android.permission-special',
    fingerprint: sms.fingerprint,
    reason: 'One-time codes are read from SMS with the user consenting each time',
    expiresAt: new Date(now + 300 * DAY).toISOString(),
  });
  h.clock.advance(60_000);
  const next = await uploadPackage(h, keys.ci, await buildApk({ manifest: riskyManifest('2.4.2'), sign: 'debug' }), 'android', '2.4.2');
  await waitForStaticScan(h, keys.ci, next.id);
  h.clock.advance(2 * DAY);
  const back = await uploadPackage(h, keys.ci, await buildApk({ manifest: riskyManifest('2.4.3'), sign: 'debug' }), 'android', '2.4.3');
  await waitForStaticScan(h, keys.ci, back.id);
  return { next: next.id, back: back.id, expiring, sms: smsId };
}
