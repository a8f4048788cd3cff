/**
 * bench:scan, the diff step: what comparing a static scan with its baseline adds to a scan job. A baseline of 100
 * findings (the analyser's cap) is stored in the bench's database, then the step the job runs before writing its
 * scan is timed: the indexed read of the baseline and of the app's suppressions, and the fingerprints and comparison
 * of 100 findings (half of them the baseline's). Reported against the scan job's own time.
 */
import type { MongoClient } from 'mongodb';
import { createRepositories, ensureAllIndexes } from '../src/data/repositories';
import { compareScan } from '../src/services/scan-baseline';
import { fingerprintOf, type Finding } from '../src/scan';
import { fmt, median } from './support';

const FINDINGS = 100;
const RUNS = 200;
const PKG = 'com.example.bench.diff';

const finding = (i: number): Finding => ({
  id: 'android.exported-activity', severity: 'medium', title: 'Exported activity without a permission',
  detail: `<activity android:name="${PKG}.Screen${i}"> is exported and declares no android:permission.`, fix: 'Set android:exported="false".', location: `${PKG}.Screen${i}`,
});

export async function diffStep(client: MongoClient, dbName: string): Promise<{ medianMs: number; p95Ms: number }> {
  const repos = createRepositories(client.db(dbName));
  await ensureAllIndexes(repos);
  const appId = 'app_benchdiff';
  const at = new Date();
  const baselineFindings = Array.from({ length: FINDINGS }, (_, i) => ({ ...finding(i), fingerprint: fingerprintOf(finding(i), PKG), status: 'new' as const, suppressed: null }));
  // Ten earlier builds of the package, so the read picks the latest among several.
  for (let b = 0; b < 10; b++) {
    await repos.scans.insertOnce({
      _id: `scn_benchdiff${b}`, appId, buildId: `bld_benchdiff${b}`, engine: 'static', grade: 'F', score: 0,
      target: { platform: 'android', name: PKG, version: `1.0.${b}` }, findings: baselineFindings, buildCreatedAt: new Date(at.getTime() - (10 - b) * 60_000),
      baseline: null, diff: null, fixedFindings: [], unsuppressed: [], signing: null, inventory: null, createdAt: at,
    });
  }
  const current = Array.from({ length: FINDINGS }, (_, i) => finding(i + FINDINGS / 2));
  const key = { appId, engine: 'static' as const, target: { platform: 'android' as const, name: PKG, version: '2.0.0' }, build: { _id: 'bld_benchdiffnew', createdAt: at }, pkg: PKG, at, comparable: true, release: true };
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const compared = await compareScan({ repos }, key, current);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (compared.diff?.existing !== FINDINGS / 2 || compared.baseline?.scanId !== 'scn_benchdiff9') throw new Error('the diff step compared with the wrong baseline');
  }
  const sorted = [...times].sort((a, b) => a - b);
  const result = { medianMs: median(times), p95Ms: sorted[Math.floor(sorted.length * 0.95)] };
  console.log(`diff step (baseline of ${FINDINGS} findings, ${RUNS} runs): median ${fmt(result.medianMs, 2)} ms, p95 ${fmt(result.p95Ms, 2)} ms`);
  return result;
}
