// Protects: static analysis runs in worker threads bounded in memory and time. A package whose analysis passes the
// deadline or the worker's heap limit (SCAN_DEADLINE_S, SCAN_WORKER_MEMORY_MB; lowered here) ends its job at once
// with one `scan.incomplete` scan naming that limit, scored 0 / F: the job is done after one attempt and never
// retried, while the service keeps answering.
import { createJobRunner } from '../../src/jobs';
import { ScanWorkers } from '../../src/scan/worker/analyze-in-worker';
import { startHarness, bearer, type Harness } from '../support/harness';
import { cleanupFixtures, writeRawFile } from '../fixtures/build-packages';
import { binaryXml, storedZip } from '../unit/scan/craft';
import { getBuild, getScan, slowPackage, uploadPackage } from './scans-support';

let h: Harness;
let appId: string;
let key: string;

beforeAll(async () => {
  h = await startHarness({ jobs: false });
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

const job = async (buildId: string) => (await h.deps.repos.scanJobs.findByBuild(appId, buildId))!;

async function staticScan(buildId: string): Promise<any> {
  const scans = (await getBuild(h, key, buildId)).scans.filter((s: any) => s.engine === 'static');
  expect(scans).toHaveLength(1);
  return (await getScan(h, key, scans[0].id)).body;
}

/** After the job ran once: done, one attempt, and nothing due however long we wait (no retry, no second scan). */
async function expectNoRetry(buildId: string, runner: { runDue(): Promise<boolean> }): Promise<void> {
  expect(await job(buildId)).toMatchObject({ state: 'done', attempts: 1 });
  h.clock.advance(60 * 60_000);
  expect(await runner.runDue()).toBe(false);
  expect(await job(buildId)).toMatchObject({ state: 'done', attempts: 1 });
}

it('ends a scan that passes its deadline with scan.incomplete naming the deadline, once', async () => {
  // About 12 s of work (scans-support.ts), 40 times the 0.3-second deadline below.
  const file = await writeRawFile('slow.apk', await slowPackage());
  const runner = createJobRunner(h.deps, {}, new ScanWorkers({ workers: 1, memoryMb: 256, deadlineMs: 300 }));
  const uploaded = await uploadPackage(h, key, file, 'android');
  expect(await runner.runDue()).toBe(true);
  const scan = await staticScan(uploaded.id);
  expect(scan.findings.map((f: any) => f.id)).toEqual(['scan.incomplete']);
  expect(scan.findings[0].detail).toContain('0.3-second deadline');
  expect({ score: scan.score, grade: scan.grade }).toEqual({ score: 0, grade: 'F' });
  await expectNoRetry(uploaded.id, runner);
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(200);
});

it('ends a scan whose worker runs out of memory with scan.incomplete naming the memory limit, once', async () => {
  // A manifest of 100,000 elements is inside every cap of limits.ts but needs ~40 MB of heap: over a 16 MB worker.
  const file = await writeRawFile('wide.apk', storedZip([['AndroidManifest.xml', binaryXml({ elements: 99_999, attributes: 1 })]]));
  const runner = createJobRunner(h.deps, {}, new ScanWorkers({ workers: 1, memoryMb: 16, deadlineMs: 60_000 }));
  const uploaded = await uploadPackage(h, key, file, 'android');
  expect(await runner.runDue()).toBe(true);
  const scan = await staticScan(uploaded.id);
  expect(scan.findings.map((f: any) => f.id)).toEqual(['scan.incomplete']);
  expect(scan.findings[0].detail).toContain('16 MB memory limit');
  expect({ score: scan.score, grade: scan.grade }).toEqual({ score: 0, grade: 'F' });
  await expectNoRetry(uploaded.id, runner);
  expect((await h.api('/v1/whoami', { headers: bearer(key) })).status).toBe(200);
});
