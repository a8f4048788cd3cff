/**
 * The client side of bench:client, in its own process as a CI step runs it (and as curl runs in its own): the upload
 * step of `shieldgate-ci upload` from the built command (client/dist), with the same API client, credential,
 * progress (a plain line every 10 % on stderr, as in a CI log) and retries. Argument: a JSON file with the service
 * address, the API key, the registered build and the file. Prints one JSON line: the seconds the upload took, the
 * process's RSS just before it and its peak RSS during it (VmHWM, reset just before where the kernel allows).
 * With `--bare` as second argument it runs the floor of any Node client instead: a plain
 * `pipeline(fs.createReadStream, http.request)` PUT, no retries, no progress (a reference point, not the client).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type * as ClientLibrary from '../client/src';
import type { Build } from '../client/src';

// The compiled client (npm run build:client), exactly what `shieldgate-ci` runs.
// BENCH_CLIENT_DIST=DIR runs another build of the client instead (to compare a change against a copy of the old dist).
const DIST = process.env.BENCH_CLIENT_DIST ? path.resolve(process.env.BENCH_CLIENT_DIST) : path.join(__dirname, '..', 'client', 'dist');
const { apiKeyCredential, createApiClient, createProgress, uploadArtifact } = require(DIST) as typeof ClientLibrary;
const { VERSION } = require(path.join(DIST, 'version')) as { VERSION: string };

interface StepInput {
  baseUrl: string;
  apiKey: string;
  build: Build;
  file: string;
}

function statusKb(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Node's floor: the file piped into a PUT, nothing else. */
async function bareUpload(url: string, file: string, sizeBytes: number): Promise<void> {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(sizeBytes) } });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  await pipeline(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), req);
  const status = await answered;
  if (status !== 200) throw new Error(`bare upload answered ${status}`);
}

async function main(): Promise<void> {
  const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as StepInput;
  const bare = process.argv[3] === '--bare';
  const api = createApiClient(input.baseUrl, `shieldgate-ci/${VERSION}`);
  const credential = apiKeyCredential(input.apiKey);
  const progress = createProgress(input.build.artifact!.sizeBytes, process.stderr, false);
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5'); // VmHWM := current RSS, so start-up does not count
  } catch {
    /* not permitted: VmHWM then also covers start-up, which only overstates the growth */
  }
  const baselineKb = statusKb('VmRSS');
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  if (bare) await bareUpload(input.build.artifact!.uploadUrl!, input.file, input.build.artifact!.sizeBytes);
  else await uploadArtifact({ api, credential, build: input.build, file: input.file, progress, log: (line) => process.stderr.write(line + '\n') });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  process.stdout.write(JSON.stringify({ seconds, cpuSeconds, baselineKb, peakKb: statusKb('VmHWM') }) + '\n');
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
