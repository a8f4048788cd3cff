// Protects: scan jobs are shared fairly and run SCAN_WORKERS at once. An app that queues many packages (or packages
// that each run to the deadline) cannot hold back other apps' scans: apps take turns in the queue, so another app's
// job waits for one analysis at most, even on one runner with one lane; and a job of an app with nothing running, on
// any instance, is claimed before older jobs of an app that has one running. A runner runs up to its concurrency at once,
// also for jobs queued while it is busy, claims a job queued or woken in its own process without waiting for its poll,
// and claims the next job once the last one's analysis is over (its outcome is written beside the next analysis); with
// one ready ahead, the next is claimed while an analysis runs and analysed when the worker is free.
// An analysis asked to run alone waits for the others and holds back new ones.
import { startHarness, type Harness } from '../support/harness';
import { JobRunner, type JobHandler } from '../../src/jobs';
import { countedAttempts } from '../../src/jobs/job-runner';
import type { ScanJobDoc } from '../../src/data/scan-jobs-repo';
import { AnalysisNotStarted, ScanWorkers } from '../../src/scan/worker/analyze-in-worker';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';

let h: Harness;

beforeAll(async () => {
  // No background runner: each test drives its own.
  h = await startHarness({ jobs: false });
});
afterAll(async () => {
  await h.close();
  await cleanupFixtures();
});

let serial = 0;
/** A queued job of `appId`, queued at the service's now (claims take the oldest runAfter first). */
async function queue(appId: string): Promise<string> {
  const now = h.clock.now();
  const id = `job_fair${String(serial++).padStart(6, '0')}`;
  const doc: ScanJobDoc = { _id: id, appId, buildId: `bld_${id}`, state: 'queued', attempts: 0, leaseUntil: null, runAfter: now, lastError: null, createdAt: now, updatedAt: now };
  expect(await h.deps.repos.scanJobs.enqueue(doc)).toBe(true);
  h.clock.advance(1_000);
  return id;
}

const stateOf = async (id: string) => (await h.deps.db.collection<ScanJobDoc>('scan_jobs').findOne({ _id: id }))!.state;

/** Jobs complete as soon as they run, in the order recorded. */
function recordingRunner(ran: string[]): JobRunner {
  const handler: JobHandler = { run: async (job) => void ran.push(job._id), giveUp: async () => undefined };
  return new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger);
}

it('claims a job of an app with nothing running before the older jobs of an app that has one running elsewhere', async () => {
  const flooding = [await queue('app_flooding'), await queue('app_flooding'), await queue('app_flooding')];
  const other = await queue('app_other');
  // Another instance holds the flooding app's oldest job (an analysis running to its deadline, say).
  const held = await h.deps.repos.scanJobs.claim(h.clock.now(), 60_000);
  expect(held?._id).toBe(flooding[0]);

  const ran: string[] = [];
  const runner = recordingRunner(ran);
  expect(await runner.runDue()).toBe(true);
  expect(ran).toEqual([other]);
  // With no other app waiting, the flooding app's jobs run after all, oldest first.
  while (await runner.runDue());
  expect(ran).toEqual([other, flooding[1], flooding[2]]);
  expect(await stateOf(flooding[0])).toBe('running');
  expect(await stateOf(other)).toBe('done');
  // The other instance's job would be claimed by later tests once its lease lapses on the test clock: gone.
  await h.deps.db.collection<ScanJobDoc>('scan_jobs').deleteOne({ _id: flooding[0] });
});

it("takes turns by app on one lane: another app's job waits for the analysis running, not for the flood", async () => {
  const ran: string[] = [];
  const runner = recordingRunner(ran);
  const flood = [];
  for (let i = 0; i < 20; i++) flood.push(await queue('app_flood'));
  expect(await runner.runDue()).toBe(true);
  expect(ran).toEqual([flood[0]]);
  // Queued after the whole flood and after one of its jobs ran: next all the same.
  const late = await queue('app_late');
  expect(await runner.runDue()).toBe(true);
  expect(ran).toEqual([flood[0], late]);
  while (await runner.runDue());
  expect(ran).toEqual([flood[0], late, ...flood.slice(1)]);
});

it("with one job ready ahead, another app's job waits for the analysis running and the one readied, not for the flood", async () => {
  const flood: string[] = [];
  for (let i = 0; i < 8; i++) flood.push(await queue('app_flood_ahead'));
  const ran: string[] = [];
  let late = '';
  let lateQueued: () => void = () => undefined;
  const queued = new Promise<void>((resolve) => (lateQueued = resolve));
  // One analysis worker: each job waits for the one before to let it go.
  let worker = Promise.resolve();
  const handler: JobHandler = {
    run: async (job) => {
      const before = worker;
      let free: () => void = () => undefined;
      worker = new Promise<void>((resolve) => (free = resolve));
      await before;
      try {
        // The first analysis runs until the other app's job is queued (and the next flood job is readied beside it).
        if (job._id === flood[0]) await queued;
        ran.push(job._id);
      } finally {
        free();
      }
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { concurrency: 1, readyAhead: 1, pollIntervalMs: 60_000 });
  runner.start();
  while ((await stateOf(flood[1])) !== 'running') await new Promise((resolve) => setTimeout(resolve, 10));
  late = await queue('app_late_ahead');
  lateQueued();
  const until = Date.now() + 20_000;
  while (ran.length < flood.length + 1 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  await runner.stop();
  // Claimed when it was queued, the late app's job runs after the running analysis and the readied one, before the flood.
  expect(ran.indexOf(late)).toBeLessThanOrEqual(2);
  expect(ran.slice(0, 2)).toEqual([flood[0], flood[1]]);
  expect([...ran].sort()).toEqual([...flood, late].sort());
});

it('interleaves apps that each queue many, one job of each in turn, and gives an idle app no credit', async () => {
  const ran: string[] = [];
  const runner = recordingRunner(ran);
  const a = [await queue('app_rr_a'), await queue('app_rr_a'), await queue('app_rr_a')];
  const b = [await queue('app_rr_b'), await queue('app_rr_b'), await queue('app_rr_b')];
  const c = [await queue('app_rr_c')];
  while (await runner.runDue());
  expect(ran).toEqual([a[0], b[0], c[0], a[1], b[1], a[2], b[2]]);
  // Idle while others were served: its next job takes the turn being served, not the turns it skipped.
  ran.length = 0;
  const busy = [await queue('app_rr_a'), await queue('app_rr_a'), await queue('app_rr_a')];
  expect(await runner.runDue()).toBe(true);
  const back = [await queue('app_rr_c'), await queue('app_rr_c'), await queue('app_rr_c')];
  while (await runner.runDue());
  expect(ran).toEqual([busy[0], back[0], busy[1], back[1], busy[2], back[2]]);
});

it("keeps a retried job's turn: due again, it goes before the later turns, not to the back of the queue", async () => {
  const first = await queue('app_retry');
  const later = [await queue('app_retry_other'), await queue('app_retry_other'), await queue('app_retry_other')];
  const held = (await h.deps.repos.scanJobs.claim(h.clock.now(), 60_000))!;
  expect(held._id).toBe(first);
  expect(await h.deps.repos.scanJobs.retryLater(held._id, held.attempts, h.clock.now(), h.clock.now(), 'storage down')).toBe(true);
  const ran: string[] = [];
  const runner = recordingRunner(ran);
  while (await runner.runDue());
  // The other app's first job shares its turn and was due first; the retry comes before that app's next turns.
  expect(ran).toEqual([later[0], first, later[1], later[2]]);
});

it('runs up to its concurrency at once, never more, also for jobs queued while a lane is busy', async () => {
  const ids = [await queue('app_many0')];
  let inFlight = 0;
  let most = 0;
  const done: string[] = [];
  const handler: JobHandler = {
    run: async (job) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Held until three run at once (or 3 s pass: a runner that never runs three ends the test with most < 3).
      const until = Date.now() + 3_000;
      while (inFlight < 3 && most < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight--;
      done.push(job._id);
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { concurrency: 3, pollIntervalMs: 50 });
  runner.start();
  // One job only: the other lanes find nothing and end. Five more arrive while it runs.
  while (inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  for (let i = 1; i < 6; i++) ids.push(await queue(`app_many${i % 3}`));
  const until = Date.now() + 20_000;
  while (done.length < ids.length && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  await runner.stop();
  expect(done.sort()).toEqual([...ids].sort());
  expect(most).toBe(3);
  for (const id of ids) expect(await stateOf(id)).toBe('done');
});

it('runs an analysis asked to run alone after those running, and no other until it is over', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36 }), sign: 'release' });
  const workers = new ScanWorkers({ workers: 2, memoryMb: 128, deadlineMs: 60_000 });
  const events: string[] = [];
  const run = (name: string, alone = false) =>
    workers.analyze(apk, 'android', new Date(), { alone, onStart: async () => void events.push(`${name} start`) }).then(() => events.push(`${name} end`));
  const first = run('a');
  await new Promise((resolve) => setTimeout(resolve, 20));
  const runs = [first, run('alone', true), run('b')];
  await Promise.all(runs);
  expect(events).toEqual(['a start', 'a end', 'alone start', 'alone end', 'b start', 'b end']);
});

it('unmarks the analyses in hand when stopped, then waits for them to end', async () => {
  const id = await queue('app_stopping');
  let release: () => void = () => undefined;
  const handler: JobHandler = {
    run: async (job) => {
      await h.deps.repos.scanJobs.markAnalysing(job._id, job.attempts, h.clock.now());
      await new Promise<void>((resolve) => (release = resolve));
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { pollIntervalMs: 50 });
  runner.start();
  const job = async () => (await h.deps.db.collection<ScanJobDoc>('scan_jobs').findOne({ _id: id }))!;
  while (!(await job()).analysingSince) await new Promise((resolve) => setTimeout(resolve, 10));
  let stopped = false;
  const stopping = runner.stop().then(() => (stopped = true));
  // Killed from here on (an orchestrator's stop timeout), the next claim would find no mark against the package.
  while ((await job()).analysingSince) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(stopped).toBe(false);
  release();
  await stopping;
  expect(await job()).toMatchObject({ state: 'done', analysingSince: null });
});

it('claims the next job as soon as the last lets its lane go, while that one still writes its outcome', async () => {
  const first = await queue('app_release0');
  const second = await queue('app_release1');
  let finishFirst: () => void = () => undefined;
  const started: string[] = [];
  const handler: JobHandler = {
    run: async (job, _stopping, released) => {
      started.push(job._id);
      if (job._id !== first) return;
      released?.(); // its analysis is over: the outcome (held here) is written beside the next analysis
      await new Promise<void>((resolve) => (finishFirst = resolve));
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { concurrency: 1, pollIntervalMs: 60_000 });
  runner.start();
  const until = Date.now() + 20_000;
  while ((await stateOf(second)) !== 'done' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  // One lane, and the second job ran to its outcome while the first had not reached its own.
  expect(started).toEqual([first, second]);
  expect(await stateOf(first)).toBe('running');
  let stopped = false;
  const stopping = runner.stop().then(() => (stopped = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(stopped).toBe(false); // stop waits for the outcome in hand
  finishFirst();
  await stopping;
  expect(await stateOf(first)).toBe('done');
});

it('readies one job ahead: claimed beside a running analysis, analysed once the worker is free, never two at once', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36 }), sign: 'release' });
  const workers = new ScanWorkers({ workers: 1, memoryMb: 128, deadlineMs: 60_000 });
  const ids = [await queue('app_ahead0'), await queue('app_ahead1'), await queue('app_ahead2')];
  const events: string[] = [];
  const handler: JobHandler = {
    run: async (job, stopping, released) => {
      events.push(`${job._id} claimed`);
      await workers.analyze(apk, 'android', new Date(), {
        onStart: async () => void events.push(`${job._id} start`),
        onEnd: async () => void events.push(`${job._id} end`),
      });
      released?.();
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { concurrency: 1, readyAhead: 1, pollIntervalMs: 60_000 });
  runner.start();
  const until = Date.now() + 60_000;
  while (!(await Promise.all(ids.map(stateOf))).every((s) => s === 'done') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  await runner.stop();
  const at = (event: string) => events.indexOf(event);
  // Each next job was claimed while the one before was being analysed, and analysed only after it ended.
  for (let i = 1; i < ids.length; i++) {
    expect(at(`${ids[i]} claimed`)).toBeLessThan(at(`${ids[i - 1]} end`));
    expect(at(`${ids[i]} start`)).toBeGreaterThan(at(`${ids[i - 1]} end`));
  }
  // One worker: the analyses never overlapped.
  expect(events.filter((e) => / (start|end)$/.test(e))).toEqual(ids.flatMap((id) => [`${id} start`, `${id} end`]));
});

it('hands back the job readied ahead as soon as it stops, without counting the attempt, while the running analysis ends', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36 }), sign: 'release' });
  const workers = new ScanWorkers({ workers: 1, memoryMb: 128, deadlineMs: 60_000 });
  const [running, readied] = [await queue('app_stop_ahead0'), await queue('app_stop_ahead1')];
  let finishRunning: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (finishRunning = resolve));
  const handler: JobHandler = {
    // As runScanJob does: an analysis given up before it began, because the runner stops, is handed back.
    run: async (job, stopping) => {
      try {
        await workers.analyze(apk, 'android', new Date(), { signal: stopping, onStart: async () => void (job._id === running && (await held)) });
      } catch (err) {
        if (err instanceof AnalysisNotStarted && stopping.aborted) return 'handed-back';
        throw err;
      }
    },
    giveUp: async () => undefined,
  };
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { concurrency: 1, readyAhead: 1, pollIntervalMs: 60_000 });
  runner.start();
  while ((await stateOf(readied)) !== 'running') await new Promise((resolve) => setTimeout(resolve, 10));
  const stopping = runner.stop();
  // Handed back while the first analysis still holds the worker: queued, due now, its claim not counted.
  const until = Date.now() + 10_000;
  while ((await stateOf(readied)) !== 'queued' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  const back = (await h.deps.db.collection<ScanJobDoc>('scan_jobs').findOne({ _id: readied }))!;
  expect(back).toMatchObject({ state: 'queued', attempts: 1, deferrals: 1, leaseUntil: null });
  expect(countedAttempts(back)).toBe(0);
  expect(back.runAfter.getTime()).toBeLessThanOrEqual(h.clock.now().getTime());
  expect(await stateOf(running)).toBe('running');
  finishRunning();
  await stopping;
  expect(await stateOf(running)).toBe('done');
  // Due now, it would be claimed by the next test's runner: gone.
  await h.deps.db.collection<ScanJobDoc>('scan_jobs').deleteOne({ _id: readied });
});

it('gives up an analysis waiting for a worker when its signal aborts, and keeps the slots right', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36 }), sign: 'release' });
  const workers = new ScanWorkers({ workers: 1, memoryMb: 128, deadlineMs: 60_000 });
  let release: () => void = () => undefined;
  const first = workers.analyze(apk, 'android', new Date(), { onStart: () => new Promise<void>((resolve) => (release = resolve)) });
  const abort = new AbortController();
  const waiting = workers.analyze(apk, 'android', new Date(), { signal: abort.signal });
  abort.abort();
  await expect(waiting).rejects.toBeInstanceOf(AnalysisNotStarted);
  release();
  await first;
  // The slot the abandoned one never took is free for the next.
  const next = await workers.analyze(apk, 'android', new Date(), { signal: new AbortController().signal });
  expect(next.findings).toEqual(expect.any(Array));
});

it('claims a job queued or woken in its own process at once, not at its next poll', async () => {
  const ran: string[] = [];
  const handler: JobHandler = { run: async (job) => void ran.push(job._id), giveUp: async () => undefined };
  // A poll interval no test waits for: only the queueing's own signal can start the job.
  const runner = new JobRunner(h.deps.repos.scanJobs, handler, h.clock, h.deps.logger, { pollIntervalMs: 600_000 });
  runner.start();
  await new Promise((resolve) => setTimeout(resolve, 100)); // the first poll finds nothing due
  const id = await queue('app_nudged');
  const waitDone = async (jobId: string) => {
    const until = Date.now() + 20_000;
    while ((await stateOf(jobId)) !== 'done' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  await waitDone(id);
  expect(ran).toEqual([id]);
  // A deferred job (written as defer leaves one: due in an hour, waiting for an earlier job) woken by the job it waited
  // for. It waits for a job of its own: the runner wakes the waiters of the job it just ran after marking it done, so a
  // waiter of that job could be woken by the runner itself once the test sees it done.
  const now = h.clock.now();
  const waiting = 'job_fairwaiting';
  const earlier = 'job_fairearlier';
  const later = new Date(now.getTime() + 3_600_000);
  await h.deps.db.collection<ScanJobDoc>('scan_jobs').insertOne({ _id: waiting, appId: 'app_nudged', buildId: 'bld_fairwaiting', state: 'queued', attempts: 1, deferrals: 1, turn: 0, leaseUntil: null, runAfter: later, waitsFor: earlier, lastError: null, createdAt: now, updatedAt: now });
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(ran).toEqual([id]);
  await h.deps.repos.scanJobs.wakeWaiters(earlier, h.clock.now());
  await waitDone(waiting);
  await runner.stop();
  expect(ran).toEqual([id, waiting]);
});
