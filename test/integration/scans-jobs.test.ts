// Protects: the durable static-scan job, on the S3 store. An upload queues exactly one job per build; a claim is
// atomic, so concurrent runners never run one job twice; a runner that crashed (its lease lapsed) has its job
// retried, and a crash after the scan was written still leaves one static scan; a job that keeps failing ends,
// after the last attempt, as `failed` with a scan saying the analysis could not complete (never a stuck job, never
// internal detail in the finding); back-off is measured on the service clock.
import { startHarness, s3StoreEnv, type Harness } from '../support/harness';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { createJobRunner, DEFAULT_RUNNER_OPTIONS, JobRunner, staticScanId } from '../../src/jobs';
import { DEFER_MS, runScanJob } from '../../src/jobs/scan-job';
import { countedAttempts } from '../../src/jobs/job-runner';
import { ScanWorkers, WorkerStartError } from '../../src/scan/worker/analyze-in-worker';
import { OWED_AFTER_MS, onArtifactUploaded, queueOwedStaticScans } from '../../src/services/build-hooks';
import { getBuild, getScan, uploadPackage } from './scans-support';
import { operatorContext } from '../../src/services/operator-context';

const s3Env = () => s3StoreEnv('scans');

let h: Harness;
let appId: string;
let key: string;
let apk: string;

beforeAll(async () => {
  // No background runner: each test claims and runs jobs itself, step by step.
  h = await startHarness({ env: s3Env(), jobs: false });
  appId = (await h.newApp('scale')).appId;
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36, application: { 'android:debuggable': 'true' } }), sign: 'release' });
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

const staticScans = async (buildId: string) => (await getBuild(h, key, buildId)).scans.filter((s: any) => s.engine === 'static');
const job = async (buildId: string) => (await h.deps.repos.scanJobs.findByBuild(appId, buildId))!;

it('queues one job per upload, however often the upload hook runs, and runs it from the S3 store', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const queued = await job(uploaded.id);
  expect(queued).toMatchObject({ state: 'queued', attempts: 0, leaseUntil: null });
  const doc = (await h.deps.repos.builds.findById(appId, uploaded.id))!;
  await onArtifactUploaded(operatorContext(h.deps, null), doc);
  expect((await job(uploaded.id))._id).toBe(queued._id);

  expect(await staticScans(uploaded.id)).toEqual([]);
  expect(await h.jobs.runDue()).toBe(true);
  expect(await h.jobs.runDue()).toBe(false);
  expect(await job(uploaded.id)).toMatchObject({ state: 'done', attempts: 1 });
  const [scan] = await staticScans(uploaded.id);
  expect(scan.id).toBe(staticScanId(queued));
  expect((await getScan(h, key, scan.id)).body.findings.map((f: any) => f.id)).toContain('android.debuggable');
  // The grade is stored on the build too, where listing builds by grade finds it.
  expect((await h.deps.repos.builds.findById(appId, uploaded.id))!.grade).toBe(scan.grade);
  const byGrade = await h.deps.repos.builds.page(appId, { grade: scan.grade }, 10);
  expect(byGrade.map((b) => b._id)).toContain(uploaded.id);
  // And on the app's summary of its latest build, which this build is: the grade dashboards count.
  expect((await h.deps.repos.apps.findById(appId))!.latestBuild).toEqual({ id: uploaded.id, createdAt: doc.createdAt, platform: 'android', grade: scan.grade });
});

it('retries the job of a runner that crashed after writing its scan, once its lease lapsed: one scan', async () => {
  h.clock.advance(1_000); // registered after the first test's build, so this one is the app's latest
  const uploaded = await uploadPackage(h, key, apk, 'android');
  // A runner claims the job, writes the scan, and dies before marking the job done.
  const claimed = (await h.deps.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!;
  expect(claimed.buildId).toBe(uploaded.id);
  await runScanJob(h.deps, claimed);
  expect(await staticScans(uploaded.id)).toHaveLength(1);
  // Had it died between writing the scan and storing the grade on the build, the retry stores it.
  await h.deps.db.collection('builds').updateOne({ _id: uploaded.id } as never, { $unset: { grade: '' } });
  await h.deps.db.collection('apps').updateOne({ _id: appId } as never, { $set: { 'latestBuild.grade': null } });

  // While the lease holds, nobody else takes the job.
  h.clock.advance(DEFAULT_RUNNER_OPTIONS.leaseMs - 1_000);
  expect(await h.jobs.runDue()).toBe(false);
  expect(await job(uploaded.id)).toMatchObject({ state: 'running', attempts: 1 });

  h.clock.advance(2_000);
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'done', attempts: 2 });
  const scans = await staticScans(uploaded.id);
  expect(scans).toHaveLength(1);
  expect((await h.deps.repos.builds.findById(appId, uploaded.id))!.grade).toBe(scans[0].grade);
  expect((await h.deps.repos.apps.findById(appId))!.latestBuild).toMatchObject({ id: uploaded.id, grade: scans[0].grade });
  expect(scans[0].id).toBe(staticScanId(claimed));
});

it('retries a job whose runner crashed before writing anything, and the late runner cannot overwrite the outcome', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const stale = (await h.deps.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!;
  h.clock.advance(DEFAULT_RUNNER_OPTIONS.leaseMs + 1);
  expect(await h.jobs.runDue()).toBe(true);
  expect(await staticScans(uploaded.id)).toHaveLength(1);
  // The first holder wakes up: its attempt number is stale, so its outcome changes nothing.
  expect(await h.deps.repos.scanJobs.retryLater(stale._id, stale.attempts, h.clock.now(), h.clock.now(), 'late')).toBe(false);
  expect(await job(uploaded.id)).toMatchObject({ state: 'done', attempts: 2, lastError: null });
});

it('never lets two runners run one job: 6 jobs, 3 runners polling at once, one attempt and one scan each', async () => {
  const builds = [];
  for (let i = 0; i < 6; i++) builds.push(await uploadPackage(h, key, apk, 'android'));
  const runners = [createJobRunner(h.deps), createJobRunner(h.deps), createJobRunner(h.deps)];
  // Builds of one package: a job whose analysis ends before an earlier build's is deferred (DEFER_MS on the service
  // clock) to take that build's scan as its baseline; rounds go on until every job is done.
  for (let round = 0; round < 10 && (await h.deps.db.collection('scan_jobs').countDocuments({ state: { $ne: 'done' }, buildId: { $in: builds.map((b) => b.id) } } as never)) > 0; round++) {
    await Promise.all(
      runners.map(async (r) => {
        while (await r.runDue()) {
          /* next job */
        }
      }),
    );
    h.clock.advance(DEFER_MS);
  }
  for (const b of builds) {
    const j = await job(b.id);
    expect(j).toMatchObject({ state: 'done' });
    expect(countedAttempts(j)).toBe(1); // deferrals are not attempts
    expect(await staticScans(b.id)).toHaveLength(1);
  }
});

it('backs off on the service clock, then fails for good with a scan that says the analysis could not complete', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const doc = (await h.deps.repos.builds.findById(appId, uploaded.id))!;
  await h.deps.artifacts.delete(doc.artifact!.storageKey); // the stored package is gone: every attempt fails

  const max = DEFAULT_RUNNER_OPTIONS.maxAttempts;
  for (let attempt = 1; attempt < max; attempt++) {
    expect(await h.jobs.runDue()).toBe(true);
    const j = await job(uploaded.id);
    expect(j).toMatchObject({ state: 'queued', attempts: attempt, lastError: expect.stringContaining('not found') });
    expect(await h.jobs.runDue()).toBe(false); // not before its back-off
    expect(await staticScans(uploaded.id)).toEqual([]);
    h.clock.set(j.runAfter);
  }
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'failed', attempts: max });
  const [summary] = await staticScans(uploaded.id);
  const scan = (await getScan(h, key, summary.id)).body;
  expect(scan.findings).toHaveLength(1);
  expect(scan.findings[0]).toMatchObject({ id: 'scan.incomplete', severity: 'high' });
  expect(scan.findings[0].detail).not.toMatch(/not found|s3|bucket|127\.0\.0\.1/i);
  expect(scan.target).toEqual({ platform: 'android', name: 'test app', version: '1.2.3' });
  expect(await h.jobs.runDue()).toBe(false);
});

it('gives up on a job whose holder crashed during the last attempt', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const doc = (await h.deps.repos.builds.findById(appId, uploaded.id))!;
  await h.deps.artifacts.delete(doc.artifact!.storageKey);
  // Every allowed attempt is claimed by a runner that then dies.
  for (let i = 0; i < DEFAULT_RUNNER_OPTIONS.maxAttempts; i++) {
    expect(await h.deps.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs)).not.toBeNull();
    h.clock.advance(DEFAULT_RUNNER_OPTIONS.leaseMs + 1);
  }
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'failed', attempts: DEFAULT_RUNNER_OPTIONS.maxAttempts + 1 });
  expect((await staticScans(uploaded.id)).length).toBe(1);
});

it('ends with a verdict, not another instance, a job whose holders died twice while analysing its package', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const leaseMs = DEFAULT_RUNNER_OPTIONS.leaseMs;
  // A holder's process ends during the analysis (the package exhausted its memory, say): the mark stays set.
  const first = (await h.deps.repos.scanJobs.claim(h.clock.now(), leaseMs))!;
  expect(first.buildId).toBe(uploaded.id);
  expect(await h.deps.repos.scanJobs.markAnalysing(first._id, first.attempts, h.clock.now())).toBe(true);
  h.clock.advance(leaseMs + 1);
  // The next holder notes it and tries again, and its process ends the same way (its run never returns).
  const dying = new JobRunner(h.deps.repos.scanJobs, {
    run: async (j) => {
      await h.deps.repos.scanJobs.markAnalysing(j._id, j.attempts, h.clock.now());
      await new Promise(() => undefined);
    },
    giveUp: async () => undefined,
  }, h.clock, h.deps.logger);
  void dying.runDue();
  const until = Date.now() + 10_000;
  // The claim leaves the first holder's mark in place until the runner notes the death: wait for the new mark.
  const marked = async () => {
    const j = await job(uploaded.id);
    return j.attempts === 2 && j.interruptedAnalyses === 1 && j.analysingSince != null;
  };
  while (!(await marked()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await job(uploaded.id)).toMatchObject({ attempts: 2, interruptedAnalyses: 1 });
  h.clock.advance(leaseMs + 1);
  // The third claim gives up at once: a scan that says why, and the job failed; the package is not analysed again.
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'failed', attempts: 3, interruptedAnalyses: 2 });
  const [summary] = await staticScans(uploaded.id);
  const scan = (await getScan(h, key, summary.id)).body;
  expect(scan.findings.map((f: any) => [f.id, f.severity])).toEqual([['scan.incomplete', 'high']]);
  expect(scan.findings[0].detail).toContain('stopped the analysing process more than once');
});

it('counts no death when the analysis worker could not start: the job is retried with back-off, unmarked', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  // The analysis is given its slot (and the job marked as analysing), then its worker fails to load.
  class NotStarting extends ScanWorkers {
    marked = false;
    protected override async runWorker(): Promise<never> {
      this.marked = (await job(uploaded.id)).analysingSince instanceof Date;
      throw new WorkerStartError('analysis worker did not load within 30000 ms');
    }
  }
  const notStarting = new NotStarting({ workers: 1, memoryMb: 64, deadlineMs: 1_000 });
  expect(await createJobRunner(h.deps, {}, notStarting).runDue()).toBe(true);
  expect(notStarting.marked).toBe(true);
  const retried = await job(uploaded.id);
  expect(retried).toMatchObject({ state: 'queued', attempts: 1, analysingSince: null, lastError: expect.stringContaining('did not load') });
  expect(retried.runAfter.getTime()).toBeGreaterThan(h.clock.now().getTime()); // back-off, as for any fault of ours
  // Its retry is an ordinary one, with others: nothing counted against the package.
  h.clock.set(retried.runAfter);
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'done', attempts: 2 });
  expect((await job(uploaded.id)).interruptedAnalyses ?? 0).toBe(0);
});

it('starts no analysis once the service is stopping, and clears a mark with every outcome', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  const claimed = (await h.deps.repos.scanJobs.claim(h.clock.now(), DEFAULT_RUNNER_OPTIONS.leaseMs))!;
  expect(claimed.buildId).toBe(uploaded.id);
  const stopping = new AbortController();
  stopping.abort();
  // A kill at the orchestrator's stop timeout could end it: it is not started, so never marked, and the runner hands
  // it back to another instance without counting the attempt.
  expect(await runScanJob(h.deps, claimed, undefined, stopping.signal)).toBe('handed-back');
  expect((await job(uploaded.id)).analysingSince ?? null).toBeNull();
  // A mark whose own unmark was lost goes with the job's next transition.
  await h.deps.repos.scanJobs.markAnalysing(claimed._id, claimed.attempts, h.clock.now());
  await h.deps.repos.scanJobs.retryLater(claimed._id, claimed.attempts, h.clock.now(), h.clock.now(), 'stopping');
  expect(await job(uploaded.id)).toMatchObject({ state: 'queued', analysingSince: null });
  expect(await h.jobs.runDue()).toBe(true);
  expect(await job(uploaded.id)).toMatchObject({ state: 'done' });
  expect((await job(uploaded.id)).interruptedAnalyses ?? 0).toBe(0);
});

it('queues the static scan a crash left owed between the upload and its job', async () => {
  const uploaded = await uploadPackage(h, key, apk, 'android');
  // The process died after marking the artifact uploaded and before queueing: no job, no queued mark.
  await h.deps.db.collection('scan_jobs').deleteMany({ buildId: uploaded.id });
  await h.deps.db.collection('builds').updateOne({ _id: uploaded.id as never }, { $unset: { 'artifact.scanQueuedAt': '' } });
  expect(await h.deps.repos.scanJobs.findByBuild(appId, uploaded.id)).toBeNull();

  // Just uploaded: its own request may be queueing it now; the sweep leaves it alone for OWED_AFTER_MS.
  expect(await queueOwedStaticScans(operatorContext(h.deps, null))).toBe(0);
  expect(await h.deps.repos.scanJobs.findByBuild(appId, uploaded.id)).toBeNull();
  h.clock.advance(OWED_AFTER_MS + 1);
  expect(await queueOwedStaticScans(operatorContext(h.deps, null))).toBeGreaterThanOrEqual(1);
  expect(await job(uploaded.id)).toMatchObject({ state: 'queued' });
  expect(await queueOwedStaticScans(operatorContext(h.deps, null))).toBe(0);
  while (await h.jobs.runDue()) {
    /* run every due job */
  }
  expect(await staticScans(uploaded.id)).toHaveLength(1);
});
