// Protects: a hostile package cannot hurt the service. Each case of the hostile corpus (test/hostile/corpus.ts,
// scaled to what still crosses every limit) is uploaded to the running service; the service answers GET /v1/whoami
// throughout, each static scan ends within its deadline with a high or critical finding and grade F, and the
// memory of the API's event loop stays bounded (the analysis runs in workers with their own heap limit).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { startHarness, bearer, type Harness } from '../support/harness';
import { cleanupFixtures } from '../fixtures/build-packages';
import { buildHostileCorpus, type HostileCase } from '../hostile/corpus';
import { FULL_SHA, getScan, registerBuild, waitForStaticScan } from './scans-support';
import { put } from './uploads-support';

jest.setTimeout(600_000);

const DEADLINE_S = 20;
const WORKER_MEMORY_MB = 128;
/** Growth of the API thread's own heap the whole corpus may cause: the packages are parsed elsewhere. */
const API_HEAP_BUDGET_MB = 96;
/** Growth of the whole process (API plus its scan worker): one worker's heap limit, plus buffers and code. */
const PROCESS_RSS_BUDGET_MB = WORKER_MEMORY_MB + 256;

let h: Harness;
let key: string;
let pollKey: string;
let corpus: HostileCase[];

/** GET /v1/whoami every 100 ms, keeping every answer that was not a 200 and the peak memory seen. */
const watch = { failures: [] as string[], answered: 0, heapBase: 0, rssBase: 0, heapPeak: 0, rssPeak: 0, timer: null as NodeJS.Timeout | null };

async function pollOnce(): Promise<void> {
  const m = process.memoryUsage();
  watch.heapPeak = Math.max(watch.heapPeak, m.heapUsed);
  watch.rssPeak = Math.max(watch.rssPeak, m.rss);
  try {
    const res = await h.api('/v1/whoami', { headers: bearer(pollKey), signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    if (res.status === 200) watch.answered++;
    else watch.failures.push(`${new Date().toISOString()} status ${res.status}`);
  } catch (err) {
    watch.failures.push(`${new Date().toISOString()} ${(err as Error).message}`);
  }
}

beforeAll(async () => {
  corpus = await buildHostileCorpus('test');
  h = await startHarness({ env: { SCAN_DEADLINE_S: String(DEADLINE_S), SCAN_WORKER_MEMORY_MB: String(WORKER_MEMORY_MB), SCAN_WORKERS: '1' } });
  const { appId } = await h.newApp('enterprise');
  key = (await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read'])).key;
  pollKey = (await h.newKey(appId, ['builds:read'])).key;
  global.gc?.();
  const m = process.memoryUsage();
  Object.assign(watch, { heapBase: m.heapUsed, rssBase: m.rss, heapPeak: m.heapUsed, rssPeak: m.rss });
  const loop = async () => {
    await pollOnce();
    if (watch.timer) watch.timer = setTimeout(loop, 100);
  };
  watch.timer = setTimeout(loop, 0);
});

afterAll(async () => {
  if (watch.timer) clearTimeout(watch.timer);
  watch.timer = null;
  await h?.close();
  await cleanupFixtures();
});

describe('each hostile package', () => {
  it.each([
    'bplist-shared-references', 'xml-plist-pi-openers', 'xml-plist-deep-nesting', 'zip-tiny-entries', 'v1-signature-files',
    'manifest-huge-string-pool', 'manifest-deep-nesting', 'zip-overlapping-entries', 'entry-declares-4gb',
    'truncated-apk-half', 'truncated-apk-end', 'truncated-aab-half', 'truncated-aab-end', 'truncated-ipa-half', 'truncated-ipa-end',
  ])('%s ends its scan within the deadline, high or critical, grade F', async (name) => {
    const c = corpus.find((x) => x.name === name)!;
    expect(c).toBeDefined();
    const bytes = await readFile(c.file);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const build = await registerBuild(h, key, { platform: c.platform, version: '1.0.0', commit: FULL_SHA, artifact: { sizeBytes: bytes.length, sha256 } });
    const answeredBefore = watch.answered;
    const upload = await put(build.artifact.uploadUrl, bytes);
    expect(upload.status).toBe(200);
    // The job runner polls every 50 ms: past the deadline, allow one more poll and the verdict's write.
    const done = await waitForStaticScan(h, key, build.id, DEADLINE_S * 1000 + 5_000);
    const ref = done.scans.find((s: { engine: string }) => s.engine === 'static');
    const { status, body: scan } = await getScan(h, key, ref.id);
    expect(status).toBe(200);
    expect({ grade: scan.grade, score: scan.score }).toEqual({ grade: 'F', score: 0 });
    expect(scan.findings.filter((f: { severity: string }) => f.severity === 'high' || f.severity === 'critical')).not.toEqual([]);
    // The service went on answering while this package was analysed.
    await pollOnce();
    expect(watch.answered).toBeGreaterThan(answeredBefore);
  });
});

it('kept answering GET /v1/whoami and kept its memory bounded throughout', async () => {
  await pollOnce();
  expect(watch.failures).toEqual([]);
  expect(watch.answered).toBeGreaterThan(corpus.length);
  const mb = (n: number) => Math.round(n / (1024 * 1024));
  expect(mb(watch.heapPeak - watch.heapBase)).toBeLessThan(API_HEAP_BUDGET_MB);
  expect(mb(watch.rssPeak - watch.rssBase)).toBeLessThan(PROCESS_RSS_BUDGET_MB);
});
