/**
 * `npm run soak`: the service under sustained mixed load while its parts fail, then a count of what was lost.
 *
 * Starts the real test bed (FerretDB, redis-server, versitygw on a small tmpfs where one can be mounted) and two
 * service instances, drives CI jobs, devices and staff for SOAK_MINUTES (default 10), injects the faults of
 * faults.ts on a schedule, lets the owed work drain, and reckons (reckon.ts). Prints a table, then the last line
 * `soak: N requests, F faults, L lost, p99 X ms, recovery max Y s`; exits 1 when anything was lost.
 *
 * SOAK_MINUTES  length of the load phase (default 10; `npm test` runs 2 through `npm run soak:smoke`; 0 skips)
 * SOAK_LOG_DIR  where the instances' logs go (default: the run's temporary folder, removed at exit)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ciJobs, devices, staff, type Run } from './actors';
import { Balancer, sleep } from './balancer';
import { startSoakBed } from './bed';
import { runFaults } from './faults';
import { Ledger } from './ledger';
import { buildSoakPackages } from './packages';
import { drainAndReckon } from './reckon';
import { setUpTenants } from './tenants';

const ROOT = path.resolve(__dirname, '..', '..');

/** CPU seconds a process has used (user and system, from /proc/<pid>/stat; Linux's clock ticks are 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const say = (line: string) => process.stdout.write(`soak: ${line}\n`);

async function main(): Promise<number> {
  const minutes = Number(process.env.SOAK_MINUTES || 10);
  if (minutes === 0) {
    say('skipped (SOAK_MINUTES=0)');
    return 0;
  }
  if (!(minutes > 0)) throw new Error('SOAK_MINUTES must be a number of minutes');
  const loadMs = minutes * 60_000;

  const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'start.js'), '--build-only'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('building the service failed');
  say('building packages');
  const packages = await buildSoakPackages();
  // A job's lease of 20 s: a scan whose instance was killed is resumed within the drain.
  const bed = await startSoakBed({ storeMb: 1024, scanLeaseS: 20, logDir: process.env.SOAK_LOG_DIR });
  const ledger = new Ledger();
  const balancer = new Balancer(bed.instances.map((i) => i.origin), ledger);
  try {
    say(`test bed up: ${bed.instances.length} instances; store ${bed.diskSkipReason ? `on the machine's disk (${bed.diskSkipReason})` : 'on a 1 GB tmpfs'}`);
    const tenants = await setUpTenants(bed.env, balancer, ledger);
    const startedAt = Date.now();
    const databaseCpuAtStart = cpuSeconds(bed.mongo.pid);
    const run: Run = { stopping: false, giveUpAt: startedAt + loadMs + 120_000, uploadsInFlight: new Map(), doing: new Map() };
    const actors = [
      ...tenants.apps.map((t, i) => ciJobs(run, balancer, ledger, t, packages, `ci ${i + 1}`)),
      ciJobs(run, balancer, ledger, tenants.apps[0], packages, 'ci 4'),
      ...[...tenants.apps, ...tenants.apps].map((t, i) => devices(run, balancer, ledger, t, `devices ${i + 1}`)),
      staff(run, balancer, tenants.staffToken, tenants.apps, 'staff'),
    ];
    say(`load for ${minutes} min: ${tenants.apps.length} apps, 4 CI jobs, 6 device fleets, 1 staff; faults on a schedule`);
    const probePackage = packages.reduce((a, b) => (a.bytes.length <= b.bytes.length ? a : b));
    const faults = await runFaults({ bed, run, balancer, ledger, tenant: tenants.apps[0], probePackage }, loadMs, startedAt);
    const left = startedAt + loadMs - Date.now();
    if (left > 0) await sleep(left);
    run.stopping = true;
    const stoppedAt = Date.now();
    const report = setInterval(() => say(`waiting for ${[...run.doing].map(([who, what]) => `${who}: ${what}`).join('; ')}`), 10_000);
    await Promise.all(actors).finally(() => clearInterval(report));
    say(`actors finished their work in hand in ${((Date.now() - stoppedAt) / 1000).toFixed(0)} s`);
    const loadS = (Date.now() - startedAt) / 1000;
    const databaseCpu = cpuSeconds(bed.mongo.pid) - databaseCpuAtStart;
    say(`load over after ${loadS.toFixed(0)} s; draining`);
    say(`database: FerretDB used ${databaseCpu.toFixed(0)} s of CPU during the load, ${((100 * databaseCpu) / (loadS * os.cpus().length)).toFixed(0)} % of the machine's ${os.cpus().length} cores`);
    const stored = { mongoUri: bed.mongo.uri, database: bed.env.MONGODB_DATABASE, s3: bed.s3, bucket: bed.bucket };
    const { checks, drainS } = await drainAndReckon(stored, balancer, ledger, tenants.apps, Date.now() + 120_000);
    tenants.receivers.close();

    for (const f of faults) say(`fault  ${f.name.padEnd(26)} at ${f.at.toFixed(0).padStart(4)} s  ${f.recoveryS === null ? 'skipped' : `recovered in ${f.recoveryS.toFixed(1)} s`}  (${f.note})`);
    for (const c of checks) say(`check  ${c.lost === 0 ? 'ok  ' : 'LOST'} ${c.name}: ${c.detail}`);
    const statuses = [...ledger.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
    say(`answers ${statuses}; ${ledger.networkErrors} failed below HTTP (killed instances, cut uploads); drained in ${drainS.toFixed(0)} s`);
    say(`refusals ${[...ledger.refusals].sort(([, a], [, b]) => b - a).map(([k, n]) => `${k}×${n}`).join(', ') || 'none'}`);
    const lost = checks.reduce((sum, c) => sum + c.lost, 0);
    const injected = faults.filter((f) => f.recoveryS !== null);
    const recoveryMax = Math.max(0, ...injected.map((f) => f.recoveryS!));
    say(`${ledger.requests} requests, ${injected.length} faults, ${lost} lost, p99 ${ledger.percentile(99).toFixed(0)} ms, recovery max ${recoveryMax.toFixed(1)} s`);
    return lost === 0 ? 0 : 1;
  } finally {
    await bed.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`soak: failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  },
);
