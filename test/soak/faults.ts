/**
 * The faults the soak injects, one after another on a schedule spread over the load phase: an instance killed with
 * SIGKILL while it receives uploads, the database paused (SIGSTOP) for 10 s, Redis restarted empty, an instance
 * killed while it analyses a package, the S3 server down for 30 s, the store's disk full for 15 s. After each, the
 * time until the service serves again (a probe succeeds on every instance) is its recovery.
 */
import { MongoClient } from 'mongodb';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Balancer } from './balancer';
import { sleep } from './balancer';
import { fillDisk, type Instance, type SoakBed } from './bed';
import type { Run } from './actors';
import type { Tenant } from './tenants';
import type { Ledger } from './ledger';
import type { SoakPackage } from './packages';

export interface FaultRecord {
  name: string;
  /** Seconds into the run when it began. */
  at: number;
  /** Seconds from the fault's end until the probe succeeded; null when it was skipped. */
  recoveryS: number | null;
  note: string;
}

interface Fault {
  name: string;
  /** Does the harm and undoes it; answers a note (what it hit) or throws Skip. */
  inject(): Promise<string>;
  /** What must work again for the service to have recovered: '' when it does, else what failed. */
  probe(): Promise<string>;
}

class Skip extends Error {}

export interface FaultContext {
  bed: SoakBed;
  ledger: Ledger;
  run: Run;
  balancer: Balancer;
  tenant: Tenant;
  probePackage: SoakPackage;
}

export async function runFaults(ctx: FaultContext, loadMs: number, startedAt: number): Promise<FaultRecord[]> {
  const faults = plan(ctx);
  const records: FaultRecord[] = [];
  // Faults start at even steps through the first 80% of the load phase (never before the previous one recovered).
  const step = (loadMs * 0.8) / faults.length;
  for (const [i, fault] of faults.entries()) {
    const due = startedAt + 5_000 + i * step;
    if (Date.now() < due) await sleep(due - Date.now());
    const at = (Date.now() - startedAt) / 1000;
    let note: string;
    try {
      note = await fault.inject();
    } catch (error) {
      if (!(error instanceof Skip)) throw error;
      records.push({ name: fault.name, at, recoveryS: null, note: `skipped: ${error.message}` });
      continue;
    }
    const ended = Date.now();
    let failure = 'not probed';
    const failures = new Set<string>();
    while ((failure = await fault.probe().catch((e: Error) => e.message)) !== '') {
      failures.add(failure);
      await sleep(250);
    }
    const seen = failures.size ? `; meanwhile: ${[...failures].slice(0, 3).join(' | ')}` : '';
    records.push({ name: fault.name, at, recoveryS: (Date.now() - ended) / 1000, note: note + seen });
  }
  return records;
}

function plan(ctx: FaultContext): Fault[] {
  const { bed, run } = ctx;
  const everyInstance = () => probeAll(ctx.bed.instances, (i) => probeRequest(i, ctx.tenant, ctx.ledger));
  return [
    {
      name: 'kill -9 during uploads',
      inject: async () => {
        const victim = await until(() => bed.instances.find((i) => (run.uploadsInFlight.get(i.origin) ?? 0) > 0), 15_000);
        const target = victim ?? bed.instances[0];
        const inFlight = run.uploadsInFlight.get(target.origin) ?? 0;
        await outage(() => target.kill(), () => target.start(), 3_000);
        return `instance ${target.name} with ${inFlight} upload(s) in flight`;
      },
      probe: everyInstance,
    },
    {
      name: 'database paused 10 s',
      inject: async () => {
        await outage(() => process.kill(bed.mongo.pid, 'SIGSTOP'), async () => process.kill(bed.mongo.pid, 'SIGCONT'), 10_000);
        return 'SIGSTOP, SIGCONT after 10 s';
      },
      probe: everyInstance,
    },
    {
      name: 'redis restart',
      inject: async () => {
        await outage(() => bed.redis.stop(), () => bed.redis.restart(), 2_000);
        return 'down 2 s, back empty';
      },
      probe: everyInstance,
    },
    {
      name: 'kill -9 during a scan',
      inject: async () => {
        const holder = await until(() => analysingHolder(bed), 30_000, 100);
        if (!holder) throw new Skip('no scan was being analysed within 30 s');
        const target = bed.instances.find((i) => holder.endsWith(`:${i.pid()}`));
        if (!target) throw new Skip(`the job's holder ${holder} is no instance of this run`);
        await outage(() => target.kill(), () => target.start(), 3_000);
        return `instance ${target.name} while analysing`;
      },
      probe: everyInstance,
    },
    {
      name: 'S3 down 30 s',
      inject: async () => {
        await outage(() => bed.s3.stop(), () => bed.s3.restart(), 30_000);
        return 'versitygw stopped, started again over the same folder';
      },
      probe: () => probeUpload(ctx),
    },
    {
      name: 'artifact disk full 15 s',
      inject: async () => {
        if (bed.diskSkipReason) throw new Skip(bed.diskSkipReason);
        const release = await fillDisk(bed.s3.root);
        await sleep(15_000);
        release();
        return 'the store\'s tmpfs filled but for 64 KB';
      },
      probe: () => probeUpload(ctx),
    },
  ];
}

/** Takes something away, waits `ms`, gives it back. */
async function outage(stop: () => unknown, start: () => Promise<unknown>, ms: number): Promise<void> {
  await stop();
  await sleep(ms);
  await start();
}

/** The first value `find` yields within `ms`, polled every `everyMs`; null when none came. */
async function until<T>(find: () => T | null | undefined | Promise<T | null | undefined>, ms: number, everyMs = 50): Promise<T | null> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const found = await find();
    if (found) return found;
    await sleep(everyMs);
  }
  return null;
}

/** The holder (host:pid) of a scan job whose package is being analysed now, if any. */
async function analysingHolder(bed: SoakBed): Promise<string | null> {
  const client = new MongoClient(bed.mongo.uri, { serverSelectionTimeoutMS: 2_000 });
  try {
    const job = await client.db('soak').collection('scan_jobs').findOne({ state: 'running', analysingSince: { $ne: null }, holder: { $ne: null } });
    return (job?.holder as string | undefined) ?? null;
  } finally {
    await client.close();
  }
}

async function probeAll(instances: Instance[], probe: (i: Instance) => Promise<string>): Promise<string> {
  const results = await Promise.all(
    instances.map(async (i) => {
      const failure = await probe(i).catch((e: Error) => e.message);
      return failure ? `${i.name}: ${failure}` : '';
    }),
  );
  return results.filter(Boolean).join(', ');
}

/** An authenticated read and a write on this instance (the database, the rate limiter, the key cache). */
async function probeRequest(instance: Instance, tenant: Tenant, ledger: Ledger): Promise<string> {
  const whoami = await fetch(`${instance.origin}/v1/whoami`, { headers: { authorization: `Bearer ${tenant.ciKey}` }, signal: AbortSignal.timeout(5_000) });
  if (whoami.status !== 200) return `whoami ${whoami.status}`;
  const eventId = randomUUID();
  const events = await fetch(`${instance.origin}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.deviceKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ detection: 'debugger', verdict: 'clean', confidence: 0.1, action: 'monitor', signals: ['probe'], occurredAt: new Date().toISOString(), deviceId: `soak-probe-${randomBytes(4).toString('hex')}`, eventId }] }),
    signal: AbortSignal.timeout(5_000),
  });
  // Counted like the devices' events: the reckoning expects every acknowledged event once.
  if (events.status === 202) ledger.acknowledge(tenant.appId, [eventId]);
  return events.status === 202 ? '' : `events ${events.status}`;
}

/** A build registered and its package uploaded through the store: 200. */
async function probeUpload(ctx: FaultContext): Promise<string> {
  const pkg = ctx.probePackage;
  const created = await ctx.balancer.call('probe', '/v1/builds', {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.tenant.ciKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: pkg.platform, version: '0.0.1', artifact: { sizeBytes: pkg.bytes.length, sha256: pkg.sha256 } }),
  }, 10_000);
  if (created?.status !== 201) return `createBuild ${created?.status ?? 'no answer'}`;
  const path = new URL(created.json().artifact.uploadUrl).pathname;
  const answer = await ctx.balancer.put(ctx.balancer.pick(), path, pkg.bytes);
  return answer?.status === 200 ? '' : `upload ${answer?.status ?? 'no answer'} ${answer?.text.slice(0, 120) ?? ''}`;
}
