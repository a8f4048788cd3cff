// Static-scan bench: analyses a 5 MB and a 500 MB APK (padded with stored random entries), each run in
// a fresh child process so peak RSS belongs to one package. Targets: the 500 MB package costs under
// 64 MB more peak RSS than the 5 MB one, and under 3x its time.
// Run: npx tsx bench/scan.ts
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { analyzePackage } from '../src/scan/static';
import { androidManifest, buildApk, cleanupFixtures } from '../test/fixtures/build-packages';

const run = promisify(execFile);
const MB = 1024 * 1024;
const RUNS = 5;
const RSS_BUDGET_MB = 64;
const TIME_RATIO = 3;

type ChildReport = { ms: number; maxRssMb: number; findings: number };

async function child(file: string): Promise<void> {
  const started = process.hrtime.bigint();
  const result = await analyzePackage(file, 'android');
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  // maxRSS is in kilobytes and covers this whole process, which did nothing but this one analysis.
  const report: ChildReport = { ms, maxRssMb: process.resourceUsage().maxRSS / 1024, findings: result.findings.length };
  process.stdout.write(JSON.stringify(report));
}

async function measure(file: string): Promise<ChildReport> {
  const reports: ChildReport[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', __filename, '--child', file]);
    reports.push(JSON.parse(stdout) as ChildReport);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(reports.map((r) => r.ms)), maxRssMb: Math.max(...reports.map((r) => r.maxRssMb)), findings: reports[0].findings };
}

async function main(): Promise<void> {
  const manifest = androidManifest({
    minSdk: 21, targetSdk: 34,
    application: { 'android:allowBackup': 'true' },
    body: '<activity android:name=".Main" android:exported="true"/><service android:name=".Sync" android:exported="true"/>',
  });
  try {
    console.log('building packages (aapt, zipalign, apksigner)...');
    const small = await buildApk({ manifest, sign: 'release', padBytes: 5 * MB });
    const large = await buildApk({ manifest, sign: 'release', padBytes: 500 * MB });
    const a = await measure(small);
    const b = await measure(large);
    const row = (label: string, r: ChildReport) =>
      `${label.padEnd(8)} time ${r.ms.toFixed(1).padStart(7)} ms   peak RSS ${r.maxRssMb.toFixed(1).padStart(6)} MB   findings ${r.findings}`;
    console.log(row('5 MB', a));
    console.log(row('500 MB', b));
    const rssDelta = b.maxRssMb - a.maxRssMb;
    const timeRatio = b.ms / a.ms;
    console.log(`peak RSS: +${rssDelta.toFixed(1)} MB (ratio ${(b.maxRssMb / a.maxRssMb).toFixed(2)}x)  target < +${RSS_BUDGET_MB} MB: ${rssDelta < RSS_BUDGET_MB ? 'PASS' : 'FAIL'}`);
    console.log(`time: ${timeRatio.toFixed(2)}x  target < ${TIME_RATIO}x: ${timeRatio < TIME_RATIO ? 'PASS' : 'FAIL'}`);
    if (rssDelta >= RSS_BUDGET_MB || timeRatio >= TIME_RATIO) process.exitCode = 1;
  } finally {
    await cleanupFixtures();
  }
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) void child(process.argv[childAt + 1]);
else void main();
