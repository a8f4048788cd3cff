/**
 * The soak's load: CI jobs registering builds and uploading packages (some cut mid-upload and sent again), devices
 * sending events with event ids (some batches sent twice on purpose), and staff reading the console's dashboards.
 * Each actor keeps its own records in the ledger. An actor stops starting new work when told, but finishes what it
 * holds: a batch not yet acknowledged is retried until it is, an upload until it is answered.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Balancer } from './balancer';
import { sleep } from './balancer';
import type { Ledger } from './ledger';
import type { SoakPackage } from './packages';
import type { Tenant } from './tenants';

export interface Run {
  /** Set when the load phase is over: no new work starts. */
  stopping: boolean;
  /** Past this, even work in hand is abandoned (and shows in the reckoning). */
  giveUpAt: number;
  /** Uploads whose bytes are being sent, by instance origin: a fault kills an instance while it holds some. */
  uploadsInFlight: Map<string, number>;
  /** What each actor is doing now (`ci 1` -> `upload bld_… 409 upload_in_progress`): printed while the run waits for them. */
  doing: Map<string, string>;
}

/**
 * Mean pauses between an actor's calls: a steady load the test bed's embedded database (FerretDB on SQLite, which
 * scans a collection for most queries) sustains for 10 minutes as its collections grow. At three times this rate the
 * database saturated after about 8 minutes and the service's background work (scans, deliveries) fell behind: the
 * soak is about faults, not the embedded database's ceiling (bench:* measures throughput).
 */
const PACE = { ciMs: 2_000, deviceMs: 1_500, staffMs: 2_000 };

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const json = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

/** One CI job after another: register, upload (15% cut once, then sent whole), on to the next. */
export async function ciJobs(run: Run, balancer: Balancer, ledger: Ledger, tenant: Tenant, packages: SoakPackage[], name: string): Promise<void> {
  let n = 0;
  while (!run.stopping) {
    const pkg = pick(packages);
    const idem = `soak-${randomUUID()}`;
    const created = await balancer.call('createBuild', '/v1/builds', {
      method: 'POST',
      headers: { ...json(tenant.ciKey), 'idempotency-key': idem },
      body: JSON.stringify({ platform: pkg.platform, version: `1.0.${++n}`, commit: randomBytes(20).toString('hex'), artifact: { sizeBytes: pkg.bytes.length, sha256: pkg.sha256 } }),
    });
    if (created?.status !== 201) {
      await sleep(500);
      continue;
    }
    const build = created.json();
    await upload(run, balancer, ledger, tenant, build.id, new URL(build.artifact.uploadUrl).pathname, pkg, Math.random() < 0.15, name);
    await sleep(PACE.ciMs * (0.5 + Math.random()));
  }
  run.doing.delete(name);
}

async function upload(run: Run, balancer: Balancer, ledger: Ledger, tenant: Tenant, buildId: string, firstPath: string, pkg: SoakPackage, cut: boolean, name: string): Promise<void> {
  let uploadPath = firstPath;
  while (Date.now() < run.giveUpAt) {
    const origin = balancer.pick();
    run.doing.set(name, `uploading ${buildId} (${pkg.label}) to ${origin}`);
    run.uploadsInFlight.set(origin, (run.uploadsInFlight.get(origin) ?? 0) + 1);
    const cutAt = cut ? Math.floor(pkg.bytes.length / 2) : undefined;
    const answer = await balancer.put(origin, uploadPath, pkg.bytes, cutAt).finally(() => run.uploadsInFlight.set(origin, run.uploadsInFlight.get(origin)! - 1));
    if (cut) {
      cut = false;
      ledger.cutUploads += 1;
    }
    if (!answer) {
      await sleep(200);
      continue;
    }
    const code = answer.status >= 400 ? safeCode(answer.text) : '';
    run.doing.set(name, `upload of ${buildId} answered ${answer.status} ${code}`);
    if (answer.status === 200 || code === 'artifact_already_uploaded') {
      ledger.uploads.push({ appId: tenant.appId, buildId, sha256: pkg.sha256, sizeBytes: pkg.bytes.length, answer: answer.status === 200 ? 200 : 409, cut: cutAt !== undefined });
      return;
    }
    if (answer.status === 403) {
      // The URL expired while the job retried: ask for a fresh one, as the CI client does.
      const fresh = await balancer.call('createUploadUrl', `/v1/builds/${buildId}/upload-url`, { method: 'POST', headers: { authorization: `Bearer ${tenant.ciKey}` } });
      if (fresh?.status === 200) uploadPath = new URL(fresh.json().artifact.uploadUrl).pathname;
      continue;
    }
    // 409 (upload in progress: a cut attempt's lock until its lease ends; too many uploads), 422 (a cut body the
    // service saw end short), 503: the same URL again, after Retry-After when given.
    const wait = Number(answer.headers.get('retry-after') ?? 0.5);
    await sleep(Math.min(wait * 1000, 2_000));
  }
}

function safeCode(text: string): string {
  try {
    return String(JSON.parse(text).code ?? '');
  } catch {
    return '';
  }
}

const DETECTIONS = ['root_jailbreak', 'emulator', 'debugger', 'hooking', 'tamper', 'overlay', 'accessibility_abuse', 'screen_capture', 'remote_access'];
/** The app's policy, as an SDK applies it: each detection has its verdict and action. */
const POLICY = new Map(DETECTIONS.map((d, i) => [d, { verdict: ['suspicious', 'compromised'][i % 2], action: ['monitor', 'warn', 'block', 'end_session'][i % 4] }]));

const newDevice = () => ({ id: `soak-device-${randomBytes(6).toString('hex')}`, platform: Math.random() < 0.5 ? 'android' : 'ios' });

/**
 * A fleet of 40 devices of one app (each on its platform, 3% of batches from a device that just joined, in place of
 * one that left) sending batches of 1 to 20 events, each with its own event id. As on a real fleet, a device
 * reports the same detections again and again: most events merge into threats already open, and new devices open new
 * ones, so `threat.opened` deliveries keep coming at a pace the embedded database sustains for the whole run.
 */
export async function devices(run: Run, balancer: Balancer, ledger: Ledger, tenant: Tenant, name: string): Promise<void> {
  const fleet = Array.from({ length: 40 }, newDevice);
  while (!run.stopping) {
    if (Math.random() < 0.03) fleet[Math.floor(Math.random() * fleet.length)] = newDevice();
    const size = 1 + Math.floor(Math.random() * 20);
    const events = Array.from({ length: size }, () => {
      const device = pick(fleet);
      const detection = pick(DETECTIONS);
      return {
        detection,
        ...POLICY.get(detection)!,
        confidence: Math.round(Math.random() * 100) / 100,
        signals: ['soak'],
        platform: device.platform,
        appVersion: '1.0.0',
        occurredAt: new Date(Date.now() - Math.floor(Math.random() * 60_000)).toISOString(),
        deviceId: device.id,
        eventId: randomUUID(),
      };
    });
    const body = JSON.stringify({ events });
    const ids = events.map((e) => e.eventId);
    run.doing.set(name, `sending a batch of ${ids.length}`);
    if (!(await sendUntilAcknowledged(run, balancer, ledger, tenant, body, ids))) continue;
    if (Math.random() < 0.1) {
      // The SDK lost the answer and sends the batch again: acknowledged, every event a duplicate.
      const again = await balancer.call('ingestEvents', '/v1/events', { method: 'POST', headers: json(tenant.deviceKey), body });
      if (again?.status === 202) {
        ledger.resentEvents += ids.length;
        ledger.resentReportedDuplicates += Number(again.json().duplicates);
      }
    }
    await sleep(PACE.deviceMs * (0.5 + Math.random()));
  }
  run.doing.delete(name);
}

async function sendUntilAcknowledged(run: Run, balancer: Balancer, ledger: Ledger, tenant: Tenant, body: string, ids: string[]): Promise<boolean> {
  while (Date.now() < run.giveUpAt) {
    const answer = await balancer.call('ingestEvents', '/v1/events', { method: 'POST', headers: json(tenant.deviceKey), body }, 30_000);
    if (answer?.status === 202) {
      ledger.acknowledge(tenant.appId, ids);
      return true;
    }
    if (answer && answer.status !== 429 && answer.status !== 503) {
      ledger.unexpected.push(`a valid batch of events refused: ${answer.status} ${answer.text.slice(0, 200)}`);
      return false;
    }
    await sleep(Math.min(Number(answer?.headers.get('retry-after') ?? 1) * 1000, 2_000));
  }
  return false;
}

const OPERATIONS = path.join(__dirname, '..', '..', 'console', 'operations');
const document = (name: string) => readFileSync(path.join(OPERATIONS, `${name}.graphql`), 'utf8');

/** Support staff on the console: the app picker, an app's builds, its threat trend and top detections; and a reader key's threat list. */
export async function staff(run: Run, balancer: Balancer, token: string, tenants: Tenant[], name: string): Promise<void> {
  const docs = Object.fromEntries(['ConsoleApps', 'AppBuilds', 'ThreatTrend', 'TopDetections', 'Whoami'].map((n) => [n, document(n)]));
  while (!run.stopping) {
    const tenant = pick(tenants);
    const range = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    const [operation, variables] = pick<[string, Record<string, unknown>]>([
      ['ConsoleApps', {}],
      ['AppBuilds', { appId: tenant.appId }],
      ['ThreatTrend', { appId: tenant.appId, range }],
      ['TopDetections', { appId: tenant.appId, range }],
      ['Whoami', {}],
    ]);
    if (Math.random() < 0.3) {
      await balancer.call('listThreats', `/v1/apps/${tenant.appId}/threats?limit=50`, { headers: { authorization: `Bearer ${tenant.readerKey}` } }, 30_000);
    } else {
      await balancer.call(`graphql:${operation}`, '/graphql', { method: 'POST', headers: json(token), body: JSON.stringify({ operationName: operation, query: docs[operation], variables }) }, 30_000);
    }
    run.doing.set(name, `last: ${operation}`);
    await sleep(PACE.staffMs * (0.5 + Math.random()));
  }
  run.doing.delete(name);
}
