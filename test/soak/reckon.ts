/**
 * After the load: waits for the work the service still owes (scans, deliveries) to drain, then holds the clients'
 * records against the database and the artifact store. Each check names what it lost; `lost` sums them.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { MongoClient, type Db, type Document } from 'mongodb';
import { GRADE_BANDS } from '../../src/scan';
import type { Balancer } from './balancer';
import { sleep } from './balancer';

/** Where the reckoning reads what the service stored: its database and its bucket. */
export interface StoredState {
  mongoUri: string;
  database: string;
  s3: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
  bucket: string;
}
import type { Ledger } from './ledger';
import type { Tenant } from './tenants';

export interface Check {
  name: string;
  /** What was checked, in words and figures. */
  detail: string;
  lost: number;
}

/**
 * A delivery never attempted is waiting its turn while it is due for less than this: lanes are shared, and a slow
 * receiver's deliveries take a lane for seconds each. Longer, it is starved, and counts as lost.
 */
const DUE_GRACE_MS = 60_000;

const gradeRank = (grade: string) => GRADE_BANDS.findIndex((b) => b.grade === grade);

export async function drainAndReckon(bed: StoredState, balancer: Balancer, ledger: Ledger, tenants: Tenant[], drainUntil: number): Promise<{ checks: Check[]; drainS: number }> {
  const client = new MongoClient(bed.mongoUri, { serverSelectionTimeoutMS: 10_000 });
  await client.connect();
  const db = client.db(bed.database);
  try {
    const drainStarted = Date.now();
    await drain(db, ledger, tenants, drainUntil);
    const drainS = (Date.now() - drainStarted) / 1000;
    const checks = [
      ...(await checkEvents(db, balancer, ledger, tenants)),
      await checkUploads(db, bed, ledger),
      await checkScans(db, ledger, tenants),
      ...(await checkWebhooks(db, ledger, tenants)),
      {
        name: '5xx answers',
        detail: `${ledger.violations.length} answered 5xx other than 503 with Retry-After${ledger.violations.length ? `: ${ledger.violations.slice(0, 5).map((v) => `${v.op} ${v.status} at ${(v.at / 1000).toFixed(1)} s ${v.detail}`).join('; ')}` : ''}`,
        lost: ledger.violations.length,
      },
      { name: 'unexpected answers', detail: ledger.unexpected.slice(0, 5).join('; ') || 'none', lost: ledger.unexpected.length },
    ];
    return { checks, drainS };
  } finally {
    await client.close();
  }
}

/** Until every recorded upload has its static scan and every prompt receiver's delivery is delivered, or the deadline. */
async function drain(db: Db, ledger: Ledger, tenants: Tenant[], until: number): Promise<void> {
  const prompt = tenants.flatMap((t) => [...t.webhooks].filter(([, kind]) => kind === 'prompt').map(([id]) => id));
  while (Date.now() < until) {
    const scanned = await staticScansByBuild(db, tenants);
    const unscanned = ledger.uploads.filter((u) => !scanned.has(u.buildId)).length;
    const undelivered = await db.collection('webhook_deliveries').countDocuments({ webhookId: { $in: prompt }, status: { $ne: 'delivered' } });
    const queuedJobs = await db.collection('scan_jobs').countDocuments({ state: { $in: ['queued', 'running'] } });
    if (unscanned === 0 && undelivered === 0 && queuedJobs === 0) return;
    await sleep(2_000);
  }
}

/**
 * buildId -> static scans of it, for every app: one query per app (the embedded database scans a collection for any
 * filter, so one query per build would cost a scan each).
 */
async function staticScansByBuild(db: Db, tenants: Tenant[]): Promise<Map<string, number>> {
  const byBuild = new Map<string, number>();
  for (const tenant of tenants) {
    const scans = await db.collection('scans').find({ appId: tenant.appId, engine: 'static' }, { projection: { buildId: 1 } }).toArray();
    for (const scan of scans) byBuild.set(scan.buildId as string, (byBuild.get(scan.buildId as string) ?? 0) + 1);
  }
  return byBuild;
}

async function checkEvents(db: Db, balancer: Balancer, ledger: Ledger, tenants: Tenant[]): Promise<Check[]> {
  let acknowledged = 0;
  let unclaimed = 0;
  let counted = 0;
  // Every claim's id in one pass: the embedded database scans the collection for an $in as for anything else.
  const claims = new Set<string>();
  for await (const doc of db.collection('threat_event_ids').find({}, { projection: { _id: 1 } })) claims.add(String(doc._id));
  for (const tenant of tenants) {
    const ids = [...(ledger.acknowledged.get(tenant.appId) ?? [])];
    acknowledged += ids.length;
    unclaimed += ids.filter((id) => !claims.has(`${tenant.appId}:${id}`)).length;
    counted += await sumThreatCounts(balancer, tenant);
  }
  const dupes = ledger.resentEvents - ledger.resentReportedDuplicates;
  return [
    {
      name: 'events counted exactly once',
      detail: `${acknowledged} acknowledged, ${counted} counted by the threats' count; ${unclaimed} acknowledged ids without their claim`,
      lost: Math.abs(counted - acknowledged) + unclaimed,
    },
    {
      name: 'batches sent twice',
      detail: `${ledger.resentEvents} events sent again, ${ledger.resentReportedDuplicates} reported duplicates`,
      lost: Math.abs(dupes),
    },
  ];
}

/** The sum of `count` over every threat of the app, read page by page as a security team reads it. */
async function sumThreatCounts(balancer: Balancer, tenant: Tenant): Promise<number> {
  let sum = 0;
  let cursor: string | null = null;
  do {
    const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await balancer.call('listThreats', `/v1/apps/${tenant.appId}/threats?${query}`, { headers: { authorization: `Bearer ${tenant.readerKey}` } });
    if (page?.status !== 200) throw new Error(`listing threats for the reckoning: ${page?.status} ${page?.text}`);
    const body = page.json();
    for (const t of body.data) sum += t.count;
    cursor = body.hasMore ? body.nextCursor : null;
  } while (cursor);
  return sum;
}

async function checkUploads(db: Db, bed: StoredState, ledger: Ledger): Promise<Check> {
  const s3 = new S3Client({ endpoint: bed.s3.endpoint, region: bed.s3.region, forcePathStyle: true, credentials: { accessKeyId: bed.s3.accessKeyId, secretAccessKey: bed.s3.secretAccessKey } });
  const problems: string[] = [];
  try {
    const builds = new Map<string, Document>();
    for (let i = 0; i < ledger.uploads.length; i += 500) {
      const ids = ledger.uploads.slice(i, i + 500).map((u) => u.buildId);
      for (const b of await db.collection('builds').find({ _id: { $in: ids as never[] } }, { projection: { artifact: 1 } }).toArray()) builds.set(b._id as unknown as string, b);
    }
    for (const upload of ledger.uploads) {
      const build = builds.get(upload.buildId);
      const artifact = build?.artifact as { status: string; storageKey: string } | undefined;
      if (artifact?.status !== 'uploaded') {
        problems.push(`${upload.buildId}: artifact ${artifact?.status ?? 'missing'}`);
        continue;
      }
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: bed.bucket, Key: artifact.storageKey }));
        const hash = createHash('sha256');
        for await (const chunk of object.Body as AsyncIterable<Buffer>) hash.update(chunk);
        const sha = hash.digest('hex');
        if (sha !== upload.sha256) problems.push(`${upload.buildId}: stored SHA-256 ${sha.slice(0, 12)}… is not the uploaded ${upload.sha256.slice(0, 12)}…`);
      } catch (error) {
        problems.push(`${upload.buildId}: object missing (${(error as Error).name})`);
      }
    }
  } finally {
    s3.destroy();
  }
  const answered409 = ledger.uploads.filter((u) => u.answer === 409).length;
  return {
    name: 'uploads stored with their SHA-256',
    detail: `${ledger.uploads.length} uploads answered (${answered409} of them 409 already uploaded after a lost answer; ${ledger.cutUploads} cut once and sent again)${problems.length ? `: ${problems.slice(0, 5).join('; ')}` : ''}`,
    lost: problems.length,
  };
}

async function checkScans(db: Db, ledger: Ledger, tenants: Tenant[]): Promise<Check> {
  const missing: string[] = [];
  let twice = 0;
  const scanned = await staticScansByBuild(db, tenants);
  for (const upload of ledger.uploads) {
    const n = scanned.get(upload.buildId) ?? 0;
    if (n === 0) missing.push(upload.buildId);
    if (n > 1) twice += 1;
  }
  return {
    name: 'every uploaded build with one static scan',
    detail: `${ledger.uploads.length - missing.length} of ${ledger.uploads.length} scanned, ${twice} scanned more than once${missing.length ? `; missing: ${missing.slice(0, 5).join(', ')}` : ''}`,
    lost: missing.length + twice,
  };
}

async function checkWebhooks(db: Db, ledger: Ledger, tenants: Tenant[]): Promise<Check[]> {
  let owed = 0;
  let unannounced = 0;
  let announcedTwice = 0;
  const undelivered: string[] = [];
  let promptDelivered = 0;
  let notReceived = 0;
  let queuedWithReason = 0;
  const overdue: string[] = [];
  let delivered = 0;
  const now = new Date();
  const ago = (at: unknown) => (at instanceof Date ? ((now.getTime() - at.getTime()) / 1000).toFixed(0) : 'never');
  for (const tenant of tenants) {
    const scans = await db.collection('scans').find({ appId: tenant.appId, engine: 'static' }, { projection: { grade: 1 } }).toArray();
    for (const [webhookId, kind] of tenant.webhooks) {
      const deliveries = await db.collection('webhook_deliveries').find({ webhookId }).toArray();
      const announced = new Map<string, number>();
      for (const d of deliveries) {
        if (d.type === 'scan.completed') {
          const scanId = JSON.parse(d.body as string).data.id as string;
          announced.set(scanId, (announced.get(scanId) ?? 0) + 1);
        }
        if (d.status === 'delivered') {
          delivered += 1;
          if (!ledger.received.get(webhookId)?.has(d._id as unknown as string)) notReceived += 1;
        } else if (d.lastError || d.lastResponseStatus) queuedWithReason += 1;
        else if ((d.nextAttemptAt as Date).getTime() > now.getTime() - DUE_GRACE_MS) queuedWithReason += 1; // not yet due, or its turn is near
        else overdue.push(`${d._id} (${kind}, ${d.type}) due ${ago(d.nextAttemptAt)} s ago, never attempted (created ${ago(d.createdAt)} s ago, last claimed ${ago(d.lastAttemptAt)} s ago, lease ${ago(d.leaseUntil)} s ago, ${d.attempts} attempt(s))`);
        if (kind === 'prompt') {
          if (d.status === 'delivered') promptDelivered += 1;
          else undelivered.push(`${d._id} ${d.status} after ${d.attempts} attempt(s): ${d.lastError ?? d.lastResponseStatus ?? 'no attempt yet'}`);
        }
      }
      for (const scan of scans) {
        if (gradeRank(scan.grade as string) <= gradeRank('A')) continue;
        owed += 1;
        const n = announced.get(scan._id as unknown as string) ?? 0;
        if (n === 0) unannounced += 1;
        if (n > 1) announcedTwice += 1;
      }
    }
  }
  const queue = overdue.length ? `; ${await queueState(db, now)}` : '';
  const duplicateSends = [...ledger.received.values()].reduce((sum, m) => sum + [...m.values()].filter((n) => n > 1).length, 0);
  return [
    {
      name: 'scan.completed queued once per scan and webhook',
      detail: `${owed} owed, ${unannounced} never queued, ${announcedTwice} queued twice`,
      lost: unannounced + announcedTwice,
    },
    {
      name: 'deliveries to prompt receivers delivered',
      detail: `${promptDelivered} delivered${undelivered.length ? `, ${undelivered.length} not: ${undelivered.slice(0, 3).join('; ')}` : ''}; ${notReceived} marked delivered that no receiver got; ${duplicateSends} sent more than once (the receiver's webhook-id makes that safe)`,
      lost: undelivered.length + notReceived,
    },
    {
      name: 'other deliveries delivered or queued with their reason',
      detail: `${delivered} delivered in all, ${queuedWithReason} queued with the reason of their last attempt or not yet due, ${overdue.length} overdue with no attempt${overdue.length ? `: ${overdue.slice(0, 3).join('; ')}${queue}` : ''}`,
      lost: overdue.length,
    },
  ];
}

/** What the senders see when deliveries are overdue: per app, pending due and live claims, and what a claim picks. */
async function queueState(db: Db, now: Date): Promise<string> {
  const col = db.collection('webhook_deliveries');
  const pending = await col.find({ status: 'pending' }, { projection: { body: 0 } }).toArray();
  const byApp = new Map<string, { due: number; leased: number; later: number }>();
  for (const d of pending) {
    const app = byApp.get(d.appId as string) ?? { due: 0, leased: 0, later: 0 };
    if (d.leaseUntil instanceof Date && d.leaseUntil > now) app.leased += 1;
    else if ((d.nextAttemptAt as Date) <= now) app.due += 1;
    else app.later += 1;
    byApp.set(d.appId as string, app);
  }
  const first = await col.find({ status: 'pending', nextAttemptAt: { $lte: now } }, { projection: { body: 0 } }).sort({ nextAttemptAt: 1 }).limit(1).toArray();
  const apps = [...byApp].map(([app, n]) => `${app}: ${n.due} due, ${n.leased} claimed, ${n.later} later`).join(', ');
  return `queue now: ${apps}; a claim would pick ${first[0] ? `${first[0]._id} of ${first[0].appId} due ${first[0].nextAttemptAt.toISOString()}` : 'nothing'}`;
}
