/**
 * npm run bench:attest: device attestation (docs/attestation.md), fast and bounded.
 *
 * 1. Verifications per second over HTTP against the engine alone. For each engine, POST /v1/attest/verify with
 *    BENCH_CONNECTIONS connections (default 16), the tokens and their challenges made before the timed phase: only
 *    the verify calls are timed and counted (the challenge is part of the protocol, one POST /v1/attest/challenges per
 *    verification, so its rate and cost are printed apart). Against the same engine function (verifyAppAssertion,
 *    verifyPlayIntegrity, verifyKeyAttestation, verifyAppAttestation) run on the same inputs in a bare loop in this
 *    process, the service idle meanwhile. Target: HTTP >= 0.5 of the bare loop, per engine.
 *    - App Attest assertions: one generated key per connection registered for the app (as an attestation would),
 *      counters rising per key, challenges from POST /v1/attest/challenges.
 *    - Play Integrity: classic tokens minted with the app's keys (test/support/play-integrity-tokens.ts).
 *    - Key attestation: the real Pixel 7 Pro RKP chain re-keyed (bench/attest-tokens.ts: every certificate as it
 *      is, keys and signatures replaced, the root configured beside Google's), its leaf signed again per challenge,
 *      at the chain's verifyAt. The real chain names one nonce ("challenge"), so it can only be verified one at a
 *      time: it is measured so too (one connection, the challenge planted again before each call, untimed), with
 *      its own bare loop, and shows that the re-keyed chain costs what the real one does.
 *    - App Attest attestations: the iPhone 14.2 attestation re-keyed the same way, at its verifyAt, and the real one
 *      one at a time.
 *    The service runs in its own process (bench/attest-server.ts) on a clock the bench sets: src/main.ts has only the
 *    system clock, and the real chains verify only at the time they were made.
 * 2. GET /v1/whoami p99 (16 connections) with nothing else, then under a flood of hostile attestation requests: one
 *    device key paced at its plan's limit (BENCH_FLOOD_RATE, default 500 requests/s, enterprise's 30,000 a minute;
 *    at most 64 exchanges in flight, so a service that cannot keep up sets the pace itself), each a
 *    POST /v1/attest/challenges and a POST /v1/attest/verify with a token of the hostile corpus (unknown, expired and
 *    replayed nonces; random bytes; 8,192-character tokens; a token past the limit; PBES2 headers; JWEs under other
 *    keys; deeply nested and oversized CBOR; assertions by unknown keys and forged ones; a 10-certificate chain that
 *    links to a configured root; 11 certificates; real chains replayed). Target: p99 under flood <= 1.5x idle.
 *    Each hostile kind's cost in the service's event loop (CPU time of its main thread per verify) is printed too.
 *
 * Knobs: BENCH_SECONDS (default 10) sets each timed phase, and the whole run takes about 15 x BENCH_SECONDS plus
 * set-up (under 3 minutes by default); BENCH_CONNECTIONS; BENCH_FLOOD_RATE; BENCH_ONLY=engines or hostile runs one
 * part; BENCH_SERVICE_PROFILE=<dir> has the service write a V8 CPU profile there. Printed beside each figure: the
 * service's CPU per request (its event loop, all its threads, the FerretDB server this bench started) and the
 * database commands per request with their mean time (from the service's /metrics). Exits 1 when a target is not met.
 */
import { X509Certificate, createHash, randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { MongoClient, type Collection } from 'mongodb';
import { benchMongo, benchRedis, fmt, freePort, percentile, stopChild, waitForHttp, whoamiLoad } from './support';
import {
  appAssertion, appAttestKey, appAttestationFor, longChain, nestedCbor, randomNonce, randomToken, rekeyChain, type RekeyedChain,
} from './attest-tokens';
import { REPO_ROOT } from '../src/core/paths';
import { loadConfig } from '../src/core/config';
import { createDeps, closeDeps } from '../src/bootstrap';
import { createLogger } from '../src/core/logger';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { operatorContext } from '../src/services/operator-context';
import { challengeIdOf, type AttestChallengeDoc } from '../src/data/attest-challenges-repo';
import { verifyAppAssertion, verifyAppAttestation } from '../src/attest/app-attest';
import { verifyKeyAttestation } from '../src/attest/key-attestation';
import { parsePlayIntegrityKeys, verifyPlayIntegrity } from '../src/attest/play-integrity';
import { loadAttestTrust, type AttestTrust } from '../src/attest/trust/trust-store';
import { APPLE_APP_ATTEST_ROOTS } from '../src/attest/roots/apple';
import { GOOGLE_ATTESTATION_ROOTS } from '../src/attest/roots/google';
import { androidKeyChain } from '../test/fixtures/android-key-corpus';
import { encryptClassic, mintClassicToken, playIntegrityKeys, signerDigest } from '../test/support/play-integrity-tokens';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BARE_SECONDS = Math.max(1, SECONDS / 3);
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 500);
/** BENCH_ONLY=engines (part 1) or hostile (part 2). */
const ONLY = process.env.BENCH_ONLY ?? '';
const WHOAMI_CONNECTIONS = 16;
const RATIO_TARGET = 0.5;
const P99_TARGET = 1.5;
const READER_KEYS = 20;

const untyped = (value: unknown): any => value;
const b64url = (b: Buffer): string => b.toString('base64url');
const sha256 = (s: string | Buffer): Buffer => createHash('sha256').update(s).digest();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const APPLE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/attestation/apple-app-attest/veehaitch-ios-14.2.json'), 'utf8'));
const PIXEL = androidKeyChain('google-rkp-pixel7pro-2023');
const PACKAGE = PIXEL.meta.attestationApplicationId!.packageInfos[0].packageName;
const VERSION_CODE = PIXEL.meta.attestationApplicationId!.packageInfos[0].version;
const SIGNER = PIXEL.meta.attestationApplicationId!.signatureDigestsSha256Hex[0];
const PIXEL_AT = new Date(PIXEL.meta.verifyAt!);
const APPLE_AT = new Date(APPLE.verifyAt);
const IOS = { teamId: APPLE.teamId as string, bundleId: APPLE.bundleId as string, environment: APPLE.environment as 'development' };
const PIXEL_CHALLENGE = Buffer.from(PIXEL.meta.challenge!.hex!, 'hex'); // "challenge"
const derOfPem = (pem: string): Buffer => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
const APPLE_REAL = {
  object: Buffer.from(APPLE.attestation, 'base64'),
  cred: derOfPem(APPLE.derived.credCertPem),
  intermediate: derOfPem(APPLE.derived.intermediateCaPem),
  nonce: Buffer.from(APPLE.derived.nonceHex, 'hex'),
  authData: Buffer.from(APPLE.derived.authDataBase64, 'base64'),
};

// ---------------------------------------------------------------------------------------------------------------
// The service process and what the bench reads of it

interface Service {
  child: ChildProcess;
  base: string;
  setClock(at: Date | null): Promise<void>;
  /** Database commands the service has sent so far, by command name, and their total time in s (its /metrics). */
  dbCommands(): Promise<Map<string, { count: number; seconds: number }>>;
}

const METRICS_TOKEN = randomBytes(24).toString('hex');

async function startService(env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // BENCH_SERVICE_PROFILE=<dir>: the service writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_SERVICE_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_SERVICE_PROFILE)}`] : [];
  const child = spawn(process.execPath, [...profile, '-r', 'tsx/cjs', path.join(REPO_ROOT, 'bench/attest-server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), PUBLIC_BASE_URL: base, METRICS_TOKEN },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited (code ${code})`)));
    child.on('message', (m: { ready?: boolean }) => m.ready && resolve());
  });
  await waitForHttp(`${base}/healthz`);
  return {
    child,
    base,
    setClock: (at) =>
      new Promise<void>((resolve) => {
        const onMessage = (m: { clockSet?: string }) => {
          if (!m.clockSet) return;
          child.off('message', onMessage);
          resolve();
        };
        child.on('message', onMessage);
        child.send({ clockAt: at ? at.toISOString() : null });
      }),
    async dbCommands() {
      const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      const out = new Map<string, { count: number; seconds: number }>();
      for (const m of text.matchAll(/^shieldgate_db_command_duration_seconds_(count|sum)\{([^}]*)\} ([\d.e+-]+)/gm)) {
        const command = /command="([^"]+)"/.exec(m[2])?.[1] ?? 'other';
        const entry = out.get(command) ?? { count: 0, seconds: 0 };
        if (m[1] === 'count') entry.count += Number(m[3]);
        else entry.seconds += Number(m[3]);
        out.set(command, entry);
      }
      return out;
    },
  };
}

/** Database commands per request between two readings, each with its mean time: "5.0 (find 3.0 at 1.2 ms, update 1.0 at 4.1 ms)". */
function perRequest(before: Map<string, { count: number; seconds: number }>, after: Map<string, { count: number; seconds: number }>, requests: number): string {
  const parts: string[] = [];
  let total = 0;
  for (const [command, now] of after) {
    const then = before.get(command) ?? { count: 0, seconds: 0 };
    const n = now.count - then.count;
    total += n / requests;
    if (n / requests >= 0.05) parts.push(`${command} ${fmt(n / requests, 1)} at ${fmt(((now.seconds - then.seconds) * 1000) / n, 1)} ms`);
  }
  return `${fmt(total, 1)} (${parts.join(', ')})`;
}

/** CPU time of the service's main thread (its event loop), in nanoseconds: /proc/<pid>/schedstat. */
const mainThreadNs = (pid: number): number => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
/** The database server this bench started (its child FerretDB; none with MONGODB_URI): its pid, to read its CPU time. */
function databasePid(): number | null {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').trim();
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/.exec(stat)!;
      if (Number(rest.split(' ')[1]) === process.pid && /ferret/i.test(comm)) return Number(entry);
    } catch {
      /* gone */
    }
  }
  return null;
}
let DB_PID: number | null = null;

/** CPU time of the whole service process (every thread), in ms. */
function processMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
}

// ---------------------------------------------------------------------------------------------------------------
// Load

interface HttpFigures {
  count: number;
  seconds: number;
  rate: number;
  p50: number;
  p99: number;
  /** Service CPU per request: its main thread, and every thread of the process (us). */
  loopUs: number;
  processUs: number;
  answers: Map<string, number>;
  unexpected: number;
  /** Database commands per request, by name. */
  db: string;
  /** CPU time of the database server per request (us), NaN when it is not this bench's. */
  databaseUs: number;
}

const tally = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
const describe = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');

/**
 * POSTs each body once to `urlPath`, `connections` at a time (an empty body: none). `bodies` as lists, one per
 * connection: each connection sends its own in order (App Attest counters rise per key); else they are dealt out as
 * connections ask. Timed from the first request to the last answer.
 */
async function post(
  service: Service, urlPath: string, keys: string[], bodies: string[][] | string[], connections: number,
  answerOf: (status: number, body: string) => string, expected: string,
): Promise<HttpFigures> {
  const perConnection = Array.isArray(bodies[0]);
  if (perConnection && (bodies as string[][]).some((b) => b.length !== bodies[0].length)) throw new Error('bench: per-connection lists of one length');
  const total = perConnection ? (bodies as string[][]).reduce((n, b) => n + b.length, 0) : bodies.length;
  let next = 0;
  let connectionIds = 0;
  let count = 0;
  const answers = new Map<string, number>();
  const latencies: number[] = [];
  let unexpected = 0;
  const pid = service.child.pid!;
  const db0 = await service.dbCommands();
  const loop0 = mainThreadNs(pid);
  const proc0 = processMs(pid);
  const database0 = DB_PID ? processMs(DB_PID) : NaN;
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${service.base}${urlPath}`,
        connections,
        amount: total,
        timeout: 60,
        requests: [
          {
            method: 'POST',
            // autocannon clones the request per connection and passes this object along: the connection's own state.
            slot: {},
            setupRequest: (req: any) => {
              const slot = req.slot;
              if (slot.id === undefined) {
                slot.id = connectionIds++;
                slot.n = 0;
              }
              const body = perConnection ? (bodies as string[][])[slot.id][slot.n++] : (bodies as string[])[next++];
              const headers: Record<string, string> = { authorization: `Bearer ${keys[slot.id % keys.length]}` };
              if (body) headers['content-type'] = 'application/json';
              return { ...req, headers, body: body || undefined };
            },
            onResponse: (status: number, body: string) => {
              count++;
              const answer = answerOf(status, body);
              tally(answers, answer);
              if (answer !== expected) unexpected++;
            },
          },
        ],
      } as any,
      (err) => (err ? reject(err) : resolve()),
    );
    instance.on('response', (_c, _s, _b, latency) => latencies.push(latency));
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const loopUs = (mainThreadNs(pid) - loop0) / 1000 / count;
  const processUs = ((processMs(pid) - proc0) * 1000) / count;
  return {
    count, seconds, rate: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), loopUs, processUs,
    answers, unexpected, db: perRequest(db0, await service.dbCommands(), count), databaseUs: DB_PID ? ((processMs(DB_PID) - database0) * 1000) / count : NaN,
  };
}

const verifyAnswer = (status: number, body: string): string => {
  if (status !== 200) return `HTTP ${status}`;
  const b = JSON.parse(body);
  return `${b.verdict}${b.reasons.length ? ` (${b.reasons.join(',')})` : ''}${b.build ? ' +build' : ''}`;
};

/** `count` challenges through POST /v1/attest/challenges, `connections` at a time: the nonces and the figures. */
async function createChallenges(service: Service, keys: string[], count: number): Promise<{ nonces: string[]; figures: HttpFigures }> {
  const nonces: string[] = [];
  const figures = await post(service, '/v1/attest/challenges', keys, Array.from({ length: count }, () => ''), CONNECTIONS, (status, body) => {
    if (status !== 201) return `HTTP ${status}`;
    nonces.push(JSON.parse(body).nonce);
    return 'created';
  }, 'created');
  return { nonces, figures };
}

/** Runs `fn` over the inputs in turn for `seconds`: calls per second (after a short warm-up). */
async function bareLoop<T>(inputs: T[], seconds: number, fn: (input: T) => unknown): Promise<{ rate: number; us: number; calls: number }> {
  for (let i = 0; i < Math.min(inputs.length, 50); i++) await fn(inputs[i]);
  const until = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  let calls = 0;
  while (Date.now() < until) {
    for (let k = 0; k < 20; k++) await fn(inputs[calls++ % inputs.length]);
  }
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  return { rate: calls / s, us: (s * 1e6) / calls, calls };
}

// ---------------------------------------------------------------------------------------------------------------
// Engines

interface EngineRow {
  name: string;
  http: HttpFigures;
  bare: { rate: number; us: number };
  challenges?: HttpFigures;
  note?: string;
}

const challengeDoc = (nonce: string, appId: string, now: Date, expiresInMs = 3_600_000, usedAt: Date | null = null): AttestChallengeDoc => ({
  _id: challengeIdOf(nonce), appId, createdAt: now, expiresAt: new Date(now.getTime() + expiresInMs), usedAt, purgeAt: new Date(now.getTime() + expiresInMs + 3_600_000),
});

/** The pool for the timed phase: enough for SECONDS at the rate the warm-up reached. */
const poolSize = (warmRate: number) => CONNECTIONS * Math.max(10, Math.min(4000, Math.round((warmRate * SECONDS) / CONNECTIONS)));

interface Ctx {
  service: Service;
  appId: string;
  deviceKeys: string[];
  challenges: Collection<AttestChallengeDoc>;
  trust: AttestTrust;
  pixel: RekeyedChain;
  apple: RekeyedChain;
}

/** One engine: a warm-up that sizes the pool, the timed HTTP phase, then the bare loop on the same inputs. */
async function measureEngine<T>(
  ctx: Ctx, name: string, expected: string,
  make: (count: number, warm: boolean) => Promise<{ bodies: string[] | string[][]; inputs: T[]; challenges?: HttpFigures }>,
  engine: (input: T) => unknown,
): Promise<EngineRow> {
  const warmCount = CONNECTIONS * 25;
  const warm = await make(warmCount, true);
  const warmed = await post(ctx.service, '/v1/attest/verify', ctx.deviceKeys, warm.bodies, CONNECTIONS, verifyAnswer, expected);
  if (warmed.unexpected > 0) throw new Error(`${name}: the warm-up got ${describe(warmed.answers)}, expected ${expected}`);
  const timed = await make(poolSize(warmed.rate), false);
  const http = await post(ctx.service, '/v1/attest/verify', ctx.deviceKeys, timed.bodies, CONNECTIONS, verifyAnswer, expected);
  const bare = await bareLoop(timed.inputs, BARE_SECONDS, engine);
  return { name, http, bare, challenges: timed.challenges };
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = Date.now();
  const mongo = await benchMongo();
  DB_PID = databasePid();
  const redis = await benchRedis();
  const dbName = `bench_attest_${Date.now()}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-attest-'));
  const kek = randomBytes(32).toString('base64');

  // Re-keyed chains, their roots configured beside the real ones (each file replaces the built-in list).
  const appleRoot = new X509Certificate(APPLE_APP_ATTEST_ROOTS[0].pem).raw;
  const pixel = rekeyChain(PIXEL.certs);
  const apple = rekeyChain([APPLE_REAL.cred, APPLE_REAL.intermediate, appleRoot], [['Apple App Attestation Root CA', 'Bench App Attestation Root CA']]);
  const googleRootsFile = path.join(tmp, 'google-roots.pem');
  const appleRootsFile = path.join(tmp, 'apple-roots.pem');
  fs.writeFileSync(googleRootsFile, [...GOOGLE_ATTESTATION_ROOTS.map((r) => r.pem.trim()), pixel.rootPem.trim()].join('\n') + '\n');
  fs.writeFileSync(appleRootsFile, [APPLE_APP_ATTEST_ROOTS[0].pem.trim(), apple.rootPem.trim()].join('\n') + '\n');
  const trust = loadAttestTrust({ appleRoots: appleRootsFile, googleRoots: googleRootsFile, revocationList: null });

  const env = {
    MONGODB_URI: mongo.uri, MONGODB_DATABASE: dbName, REDIS_URL: redis.url, LOG_LEVEL: 'warn', KEY_ENCRYPTION_KEY: kek,
    ATTEST_GOOGLE_ROOTS: googleRootsFile, ATTEST_APPLE_ROOTS: appleRootsFile,
  };
  const client = new MongoClient(mongo.uri);
  await client.connect();
  const deps = await createDeps(loadConfig(env), { mongo: client, logger: createLogger('silent') });
  let service: Service | null = null;
  try {
    // The app, as the operator makes it: an admin key, the device keys the flood and the verifications use, readers for whoami.
    const op = operatorContext(deps);
    const app = await createApp(op, { name: 'bench', plan: 'enterprise' });
    const appId = app._id;
    const admin = (await createApiKey(op, { appId, scopes: ['rules:read', 'rules:write', 'builds:read'], mode: 'live' })).key;
    const deviceKeys: string[] = [];
    for (let k = 0; k < CONNECTIONS; k++) deviceKeys.push((await createApiKey(op, { appId, scopes: ['attest:verify'], mode: 'live' })).key);
    const attacker = (await createApiKey(op, { appId, scopes: ['attest:verify'], mode: 'live' })).key;
    const readers: string[] = [];
    for (let k = 0; k < READER_KEYS; k++) readers.push((await createApiKey(op, { appId, scopes: ['builds:read'], mode: 'live' })).key);

    service = await startService(env);
    const base = service.base;
    const pi = playIntegrityKeys();
    const configured = await fetch(`${base}/v1/apps/${appId}/attestation`, {
      method: 'PUT', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ android: { packageName: PACKAGE, playIntegrity: pi.config, keyAttestation: true }, ios: IOS }),
    });
    if (configured.status !== 200) throw new Error(`PUT attestation answered ${configured.status}: ${await configured.text()}`);
    const signer = await fetch(`${base}/v1/apps/${appId}/signers`, {
      method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ package: PACKAGE, sha256: SIGNER, reason: 'bench: the Pixel fixture signer' }),
    });
    if (signer.status !== 201) throw new Error(`POST signers answered ${signer.status}: ${await signer.text()}`);
    // A registered build whose static scan read the attested versionCode, so verdicts name it (what a scan job writes
    // of it and the attestation path reads: ScansRepo.latestStaticForVersionCode, BuildsRepo.findById).
    const buildId = `bld_bench${randomBytes(8).toString('hex')}`;
    const now = new Date();
    await deps.db.collection('builds').insertOne(untyped({
      _id: buildId, appId, platform: 'android', version: '1.0.0', commit: null, status: 'succeeded', engine: 'preview', createdAt: now, artifact: null, release: true, grade: 'A',
    }));
    await deps.db.collection('scans').insertOne(untyped({
      _id: `scn_bench${randomBytes(8).toString('hex')}`, appId, buildId, engine: 'static', grade: 'A', score: 97,
      target: { platform: 'android', name: PACKAGE, version: '1.0.0', versionCode: VERSION_CODE }, findings: [], signing: null, createdAt: now, buildCreatedAt: now,
    }));
    const challenges = deps.db.collection<AttestChallengeDoc>('attest_challenges');
    const ctx: Ctx = { service, appId, deviceKeys, challenges, trust, pixel, apple };

    console.log(`bench:attest: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}; ${CONNECTIONS} connections, ${SECONDS} s phases, bare loops ${fmt(BARE_SECONDS, 1)} s`);
    console.log('  HTTP: POST /v1/attest/verify only is timed and counted; its challenges were made before (POST /v1/attest/challenges, or planted in the database where a nonce must have a set length)');
    const rows: EngineRow[] = [];
    const reals: EngineRow[] = [];
    // App Attest keys, one per connection (so each key's counters arrive in order), registered as an attestation would.
    const assertKeys = Array.from({ length: CONNECTIONS }, () => appAttestKey());
    for (const k of assertKeys) {
      await deps.repos.appAttestKeys.register({ appId, keyId: k.keyId, publicKeySpki: k.spki.toString('base64'), environment: IOS.environment, counter: 0, attestedAt: new Date(), lastAssertedAt: null });
    }

    if (ONLY !== 'hostile') {
      // App Attest assertions.
      await service.setClock(null);
      const counters = assertKeys.map(() => 0);
      const assertionKey = { keyId: assertKeys[0].keyId, publicKeySpki: assertKeys[0].spki };
      rows.push(await measureEngine(ctx, 'app_attest assertion', 'trusted', async (count) => {
        const made = await createChallenges(service!, deviceKeys, count);
        const bodies: string[][] = assertKeys.map(() => []);
        const inputs: Parameters<typeof verifyAppAssertion>[0][] = [];
        made.nonces.forEach((nonce, i) => {
          const c = i % CONNECTIONS;
          const assertion = appAssertion(assertKeys[c].privateKey, IOS, nonce, ++counters[c]);
          bodies[c].push(JSON.stringify({ token: b64url(assertion), nonce, platform: 'ios', keyId: assertKeys[c].keyId }));
          inputs.push({ assertion, clientDataHash: sha256(nonce), app: IOS, key: c === 0 ? assertionKey : { keyId: assertKeys[c].keyId, publicKeySpki: assertKeys[c].spki } });
        });
        return { bodies, inputs, challenges: made.figures };
      }, (input) => {
        const r = verifyAppAssertion(input);
        if (r.reasons.length) throw new Error(`bare assertion: ${r.reasons}`);
      }));

      // Play Integrity: classic tokens for the configured package, signed by the recorded signer, versionCode of the build.
      const piKeys = parsePlayIntegrityKeys(pi.config).keys!;
      rows.push(await measureEngine(ctx, 'play_integrity', 'trusted +build', async (count) => {
        const made = await createChallenges(service!, deviceKeys, count);
        const bodies: string[] = [];
        const inputs: Parameters<typeof verifyPlayIntegrity>[0][] = [];
        for (const nonce of made.nonces) {
          const token = await mintClassicToken(pi, {
            requestDetails: { requestPackageName: PACKAGE, nonce },
            appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(SIGNER)], versionCode: String(VERSION_CODE) },
          });
          bodies.push(JSON.stringify({ token, nonce, platform: 'android' }));
          inputs.push({ token, keys: piKeys, packageName: PACKAGE, nonce, recordedSigners: [SIGNER], minDeviceIntegrity: 'MEETS_DEVICE_INTEGRITY', now: new Date() });
        }
        return { bodies, inputs, challenges: made.figures };
      }, async (input) => {
        const r = await verifyPlayIntegrity({ ...input, now: new Date() });
        if (r.reasons.length) throw new Error(`bare play integrity: ${r.reasons}`);
      }));

      // Key attestation at the Pixel chain's time: the re-keyed chain per challenge (9-character nonces, the length of
      // the real "challenge", planted), then the real chain one call at a time.
      await service.setClock(PIXEL_AT);
      const kaInput = (chain: Buffer, nonce: Buffer): Parameters<typeof verifyKeyAttestation>[0] => ({
        chain, challenge: nonce, packageName: PACKAGE, recordedSigners: [SIGNER], roots: trust.googleRoots, revocation: trust.revocation, now: PIXEL_AT,
      });
      rows.push(await measureEngine(ctx, 'key_attestation (Pixel chain re-keyed)', 'trusted +build', async (count) => {
        const nonces = new Set<string>();
        while (nonces.size < count) nonces.add(randomNonce(PIXEL_CHALLENGE.length));
        await challenges.insertMany([...nonces].map((n) => challengeDoc(n, appId, PIXEL_AT)));
        const bodies: string[] = [];
        const inputs: Parameters<typeof verifyKeyAttestation>[0][] = [];
        for (const nonce of nonces) {
          const chain = Buffer.concat([pixel.leafFor(PIXEL_CHALLENGE, Buffer.from(nonce)), ...pixel.certs.slice(1)]);
          bodies.push(JSON.stringify({ token: b64url(chain), nonce, platform: 'android' }));
          inputs.push(kaInput(chain, Buffer.from(nonce)));
        }
        return { bodies, inputs };
      }, (input) => {
        const r = verifyKeyAttestation(input);
        if (r.reasons.length) throw new Error(`bare key attestation: ${r.reasons}`);
      }));
      reals.push(await oneAtATime(ctx, 'key_attestation (real Pixel chain)', 'trusted +build', PIXEL_AT, PIXEL_CHALLENGE.toString('utf8'),
        JSON.stringify({ token: b64url(PIXEL.chain), nonce: PIXEL_CHALLENGE.toString('utf8'), platform: 'android' }),
        kaInput(PIXEL.chain, PIXEL_CHALLENGE), (input) => {
          const r = verifyKeyAttestation(input);
          if (r.reasons.length) throw new Error(`bare real key attestation: ${r.reasons}`);
        }));

      // App Attest attestations at the iPhone's time: the re-keyed attestation per challenge, then the real one.
      await service.setClock(APPLE_AT);
      const aaInput = (object: Buffer, nonce: string): Parameters<typeof verifyAppAttestation>[0] => ({
        object, clientDataHash: sha256(nonce), app: IOS, keyId: null, roots: trust.appleRoots, now: APPLE_AT,
      });
      rows.push(await measureEngine(ctx, 'app_attest attestation (iPhone re-keyed)', 'trusted', async (count) => {
        const made = await createChallenges(service!, deviceKeys, count);
        const bodies: string[] = [];
        const inputs: Parameters<typeof verifyAppAttestation>[0][] = [];
        for (const nonce of made.nonces) {
          const object = appAttestationFor(apple, APPLE_REAL, nonce);
          bodies.push(JSON.stringify({ token: b64url(object), nonce, platform: 'ios' }));
          inputs.push(aaInput(object, nonce));
        }
        return { bodies, inputs, challenges: made.figures };
      }, (input) => {
        const r = verifyAppAttestation(input);
        if (r.reasons.length) throw new Error(`bare app attestation: ${r.reasons}`);
      }));
      reals.push(await oneAtATime(ctx, 'app_attest attestation (real iPhone)', 'trusted', APPLE_AT, APPLE.clientDataUtf8,
        JSON.stringify({ token: b64url(APPLE_REAL.object), nonce: APPLE.clientDataUtf8, platform: 'ios' }),
        aaInput(APPLE_REAL.object, APPLE.clientDataUtf8), (input) => {
          const r = verifyAppAttestation(input);
          if (r.reasons.length) throw new Error(`bare real app attestation: ${r.reasons}`);
        }));
      await service.setClock(null);
    }

    // Part 2: the hostile corpus, each kind's cost, then whoami idle and under the flood.
    type Busy = { result: autocannon.Result; busy: number; database: number };
    let hostile: { costs: Awaited<ReturnType<typeof hostileCosts>>; idle: Busy; flood: Awaited<ReturnType<typeof floodWhile<Busy>>> } | null = null;
    if (ONLY !== 'engines') {
      const corpus = await hostileCorpus(ctx, pi, assertKeys[0]);
      const costs = await hostileCosts(ctx, corpus, attacker);
      await whoamiLoad(`${base}/v1/whoami`, readers, 2, WHOAMI_CONNECTIONS).result; // warm-up
      const pid = service.child.pid!;
      const busy = async <T>(run: () => Promise<T>): Promise<{ result: T; busy: number; database: number }> => {
        const ns0 = mainThreadNs(pid);
        const database0 = DB_PID ? processMs(DB_PID) : NaN;
        const t0 = process.hrtime.bigint();
        const result = await run();
        const ns = Number(process.hrtime.bigint() - t0);
        return { result, busy: (mainThreadNs(pid) - ns0) / ns, database: DB_PID ? ((processMs(DB_PID) - database0) * 1e6) / ns : NaN };
      };
      const idle = await busy(() => whoamiLoad(`${base}/v1/whoami`, readers, SECONDS, WHOAMI_CONNECTIONS).result);
      const flood = await floodWhile(ctx, corpus, attacker, () => busy(() => whoamiLoad(`${base}/v1/whoami`, readers, SECONDS, WHOAMI_CONNECTIONS).result));
      hostile = { costs, idle, flood };
    }

    // Report.
    let failed = false;
    if (rows.length) {
      console.log('');
      console.log('verifications per second: HTTP (N connections, verify calls only) vs the engine function in a bare loop (one thread)');
    }
    const summary: string[] = [];
    for (const row of rows) {
      const ratio = row.http.rate / row.bare.rate;
      const met = ratio >= RATIO_TARGET && row.http.unexpected === 0;
      if (!met) failed = true;
      console.log(`  ${row.name}`);
      console.log(`    HTTP: ${row.http.count} verifies in ${fmt(row.http.seconds, 2)} s = ${fmt(row.http.rate)}/s, p50 ${fmt(row.http.p50)} ms, p99 ${fmt(row.http.p99)} ms; service CPU per verify ${fmt(row.http.loopUs, 0)} us in its event loop, ${fmt(row.http.processUs, 0)} us all threads, the database server ${fmt(row.http.databaseUs, 0)} us; database commands per verify ${row.http.db}; answers: ${describe(row.http.answers)}`);
      console.log(`    bare: ${fmt(row.bare.rate)}/s (${fmt(row.bare.us, 0)} us per call)`);
      if (row.note) console.log(`    ${row.note}`);
      if (row.challenges) console.log(`    challenges (made before, not timed above): ${fmt(row.challenges.rate)}/s, p99 ${fmt(row.challenges.p99)} ms, service CPU ${fmt(row.challenges.loopUs, 0)} us per challenge in its event loop, the database server ${fmt(row.challenges.databaseUs, 0)} us; database commands ${row.challenges.db}`);
      summary.push(`${row.name}: HTTP/bare ${fmt(ratio, 2)} (target >= ${RATIO_TARGET}: ${met ? 'met' : 'NOT met'})`);
    }
    for (const row of reals) {
      console.log(`  ${row.name}, one call at a time (its nonce is fixed: planted again before each call, untimed)`);
      console.log(`    HTTP: ${row.http.count} verifies, ${fmt(row.http.rate)}/s of verify time, p50 ${fmt(row.http.p50)} ms, p99 ${fmt(row.http.p99)} ms; service CPU per verify ${fmt(row.http.loopUs, 0)} us in its event loop; answers: ${describe(row.http.answers)}`);
      console.log(`    bare: ${fmt(row.bare.rate)}/s (${fmt(row.bare.us, 0)} us per call); HTTP/bare ${fmt(row.http.rate / row.bare.rate, 2)} (latency-bound at one connection: not a target)`);
      if (row.http.unexpected > 0) failed = true;
    }

    if (hostile) {
      const { costs, flood } = hostile;
      const idle = hostile.idle.result;
      const during = flood.result.result;
      console.log('');
      console.log('hostile kinds, one at a time (20 each): the service\'s event-loop CPU per verify, the answer, database commands per verify');
      for (const c of costs) console.log(`  ${c.name.padEnd(44)} ${fmt(c.loopUs, 0).padStart(6)} us   ${c.answer.replace(/ \d+$/, '').padEnd(50)} ${c.db}`);
      console.log('');
      const ratio = during.latency.p99 / Math.max(idle.latency.p99, 1);
      const p99Met = ratio <= P99_TARGET;
      if (!p99Met) failed = true;
      console.log(`whoami idle : ${fmt(idle.requests.average)} req/s, p50 ${idle.latency.p50} ms, p99 ${idle.latency.p99} ms, non-2xx ${idle.non2xx}; service event loop busy ${fmt(hostile.idle.busy * 100, 0)} % (${fmt((hostile.idle.busy * 1e6) / idle.requests.average, 0)} us per whoami), database server ${fmt(hostile.idle.database * 100, 0)} % of a core`);
      console.log(`whoami flood: ${fmt(during.requests.average)} req/s, p50 ${during.latency.p50} ms, p99 ${during.latency.p99} ms, non-2xx ${during.non2xx}; service event loop busy ${fmt(flood.result.busy * 100, 0)} %, database server ${fmt(flood.result.database * 100, 0)} % of a core`);
      console.log(`flood: ${fmt(flood.rate)} requests/s from one device key (paced at ${FLOOD_RATE}; exchanges skipped with 64 in flight: ${flood.skipped}), half of them POST /v1/attest/challenges; verify answers: ${describe(flood.answers)}`);
      summary.push(`whoami p99 under the hostile flood / idle: ${fmt(ratio, 2)} (target <= ${P99_TARGET}: ${p99Met ? 'met' : 'NOT met'})`);
    }

    console.log('');
    console.log(`summary (${fmt((Date.now() - startedAt) / 1000, 0)} s, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}):`);
    for (const line of summary) console.log(`  ${line}`);
    if (failed) process.exitCode = 1;
  } finally {
    if (service) await stopChild(service.child);
    await deps.db.dropDatabase().catch(() => undefined);
    await closeDeps(deps, { closeMongo: false });
    await client.close();
    await redis.stop();
    await mongo.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * A real token whose nonce is fixed, verified one call at a time: before each, its challenge is planted again
 * (untimed); the verify calls' own time is what the rate is of. Then the same engine call in a bare loop.
 */
async function oneAtATime<T>(
  ctx: Ctx, name: string, expected: string, at: Date, nonce: string, body: string, input: T, engine: (input: T) => unknown,
): Promise<EngineRow> {
  const key = ctx.deviceKeys[0];
  const answers = new Map<string, number>();
  const latencies: number[] = [];
  let unexpected = 0;
  let loopNs = 0;
  const pid = ctx.service.child.pid!;
  const until = Date.now() + (SECONDS / 2) * 1000;
  for (let i = 0; Date.now() < until || i < 10; i++) {
    await ctx.challenges.replaceOne({ _id: challengeIdOf(nonce) }, challengeDoc(nonce, ctx.appId, at), { upsert: true });
    const loop0 = mainThreadNs(pid);
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${ctx.service.base}/v1/attest/verify`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    loopNs += mainThreadNs(pid) - loop0;
    if (i < 3) continue; // warm-up
    latencies.push(ms);
    const answer = verifyAnswer(res.status, text);
    tally(answers, answer);
    if (answer !== expected) unexpected++;
  }
  const total = latencies.reduce((a, b) => a + b, 0) / 1000;
  const http: HttpFigures = {
    count: latencies.length, seconds: total, rate: latencies.length / total, p50: percentile(latencies, 50), p99: percentile(latencies, 99),
    loopUs: loopNs / 1000 / (latencies.length + 3), processUs: NaN, answers, unexpected, db: '', databaseUs: NaN,
  };
  const bare = await bareLoop([input], BARE_SECONDS / 2, engine);
  return { name, http, bare };
}

// ---------------------------------------------------------------------------------------------------------------
// The hostile corpus

interface HostileKind {
  name: string;
  /** Which nonce the verify sends: the live challenge just made, one never issued, an expired one, one already used. */
  nonce: 'live' | 'unknown' | 'expired' | 'replayed';
  body(nonce: string): string;
}

async function hostileCorpus(ctx: Ctx, pi: ReturnType<typeof playIntegrityKeys>, registered: ReturnType<typeof appAttestKey>): Promise<HostileKind[]> {
  const genuinePi = await mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE, nonce: randomNonce(43) }, appIntegrity: { packageName: PACKAGE, certificateSha256Digest: [signerDigest(SIGNER)], versionCode: '1' } });
  const otherKeyPi = await mintClassicToken(playIntegrityKeys(), { requestDetails: { requestPackageName: PACKAGE } });
  const strangerSigned = await mintClassicToken(pi, { requestDetails: { requestPackageName: PACKAGE } }, { signWith: playIntegrityKeys().signingKey });
  const notJws = await encryptClassic('{"not":"a jws"}'.repeat(100), pi.aesKey);
  const header = (h: object) => Buffer.from(JSON.stringify(h)).toString('base64url');
  const pbes2 = `${header({ alg: 'PBES2-HS512+A256KW', enc: 'A256GCM', p2c: 10_000_000, p2s: randomBytes(16).toString('base64url') })}.${randomToken(54)}.${randomToken(16)}.${randomToken(600)}.${randomToken(22)}`;
  const noneAlg = `${header({ alg: 'dir', enc: 'A256GCM', zip: 'DEF' })}..${randomToken(16)}.${randomToken(600)}.${randomToken(22)}`;
  const android = (token: string) => (nonce: string) => JSON.stringify({ token, nonce, platform: 'android' });
  const ios = (token: string, keyId?: string) => (nonce: string) => JSON.stringify(keyId ? { token, nonce, platform: 'ios', keyId } : { token, nonce, platform: 'ios' });
  const hugeCbor = Buffer.concat([Buffer.from([0xa3, 0x63]), Buffer.from('fmt'), Buffer.from([0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), randomBytes(64)]);
  const deepMap = Buffer.concat([...Array.from({ length: 1500 }, () => Buffer.from([0xa1, 0x61, 0x61])), Buffer.from([0x00])]); // {"a": {"a": ...}}
  const ten = longChain(10, ctx.pixel);
  const eleven = longChain(11, ctx.pixel);
  const rekeyedOther = Buffer.concat([ctx.pixel.leafFor(PIXEL_CHALLENGE, Buffer.from('xxxxxxxxx')), ...ctx.pixel.certs.slice(1)]);
  const unknownKeyId = sha256(randomBytes(32)).toString('base64');
  return [
    { name: 'unknown nonce (a genuine token)', nonce: 'unknown', body: android(genuinePi) },
    { name: 'expired nonce', nonce: 'expired', body: android(genuinePi) },
    { name: 'replayed nonce', nonce: 'replayed', body: android(genuinePi) },
    { name: 'random bytes, 1 KB (android)', nonce: 'live', body: (n) => android(b64url(randomBytes(1024)))(n) },
    { name: '8,192-character random token (android)', nonce: 'live', body: (n) => android(randomToken(8192))(n) },
    { name: '8,192 characters in five parts (a JWE shape)', nonce: 'live', body: (n) => android(randomToken(8192, 4))(n) },
    { name: '20,000-character token (past the limit)', nonce: 'live', body: android(randomToken(20_000)) },
    { name: 'JWE, PBES2 with p2c 10,000,000', nonce: 'live', body: android(pbes2) },
    { name: 'JWE, dir + DEF header', nonce: 'live', body: android(noneAlg) },
    { name: 'JWE under another app\'s key', nonce: 'live', body: android(otherKeyPi) },
    { name: 'JWE opening to something not a JWS', nonce: 'live', body: android(notJws) },
    { name: 'JWS signed by a stranger', nonce: 'live', body: android(strangerSigned) },
    { name: 'CBOR nested 6,000 deep (ios)', nonce: 'live', body: ios(b64url(nestedCbor(6000))) },
    { name: 'CBOR maps nested 1,500 deep (ios)', nonce: 'live', body: ios(b64url(deepMap)) },
    { name: 'CBOR byte string of 2^63 bytes (ios)', nonce: 'live', body: ios(b64url(hugeCbor)) },
    { name: 'assertion by an unknown key', nonce: 'live', body: (n) => ios(b64url(appAssertion(registered.privateKey, IOS, n, 1)), unknownKeyId)(n) },
    { name: 'forged assertion by a registered key', nonce: 'live', body: (n) => ios(b64url(appAssertion(registered.privateKey, IOS, n, 1 << 30, true)), registered.keyId)(n) },
    { name: 'real iPhone attestation replayed', nonce: 'live', body: ios(b64url(APPLE_REAL.object)) },
    { name: 'key attestation chain of 10 certificates', nonce: 'live', body: android(b64url(ten)) },
    { name: 'key attestation chain of 11 certificates', nonce: 'live', body: android(b64url(eleven)) },
    { name: 'real Pixel chain replayed (expired today)', nonce: 'live', body: android(b64url(PIXEL.chain)) },
    { name: 'Pixel chain re-keyed, another challenge', nonce: 'live', body: android(b64url(rekeyedOther)) },
  ];
}

/** Expired challenges of the app, planted: a verify finds them past their time. */
async function plantExpired(ctx: Ctx, count: number): Promise<string[]> {
  const nonces = Array.from({ length: count }, () => randomNonce(43));
  const then = new Date(Date.now() - 10 * 60_000);
  if (count) await ctx.challenges.insertMany(nonces.map((n) => challengeDoc(n, ctx.appId, then, 5 * 60_000)));
  return nonces;
}

/** Each hostile kind alone, 20 verifies in a row: the service's event-loop CPU per verify (challenges made before, not counted). */
async function hostileCosts(ctx: Ctx, corpus: HostileKind[], key: string): Promise<{ name: string; loopUs: number; answer: string; db: string }[]> {
  const out: { name: string; loopUs: number; answer: string; db: string }[] = [];
  const pid = ctx.service.child.pid!;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const N = 20;
  for (const kind of corpus) {
    const expired = kind.nonce === 'expired' ? await plantExpired(ctx, N + 2) : [];
    const nonces: string[] = [];
    for (let i = 0; i < N + 2; i++) {
      if (kind.nonce === 'live' || kind.nonce === 'replayed') {
        const res = await fetch(`${ctx.service.base}/v1/attest/challenges`, { method: 'POST', headers });
        nonces.push(untyped(await res.json()).nonce);
      } else nonces.push(kind.nonce === 'expired' ? expired[i] : randomNonce(43));
    }
    if (kind.nonce === 'replayed') {
      for (const n of nonces) await fetch(`${ctx.service.base}/v1/attest/verify`, { method: 'POST', headers, body: JSON.stringify({ token: 'AAAAAAAAAA', nonce: n, platform: 'android' }) });
    }
    const bodies = nonces.map((n) => kind.body(n));
    const answers = new Map<string, number>();
    let loopNs = 0;
    let db0 = new Map<string, { count: number; seconds: number }>();
    for (let i = 0; i < bodies.length; i++) {
      if (i === 2) db0 = await ctx.service.dbCommands();
      const loop0 = mainThreadNs(pid);
      const res = await fetch(`${ctx.service.base}/v1/attest/verify`, { method: 'POST', headers, body: bodies[i] });
      const text = await res.text();
      if (i >= 2) loopNs += mainThreadNs(pid) - loop0; // the first two warm the path
      tally(answers, verifyAnswer(res.status, text));
    }
    out.push({ name: kind.name, loopUs: loopNs / 1000 / N, answer: describe(answers), db: perRequest(db0, await ctx.service.dbCommands(), N) });
  }
  return out;
}

/** One request on a keep-alive agent: its status and body. */
function request(agent: http.Agent, url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: body ? { ...headers, 'content-type': 'application/json' } : headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The flood: one device key sending FLOOD_RATE requests a second, paced evenly (open loop, at most 8 connections and
 * 64 exchanges in flight; beyond that an exchange is skipped and counted), each exchange a challenge and a verify
 * of the next hostile kind with that live nonce, or an unknown, expired or already used one. Runs while `during`
 * does, and a second either side.
 */
async function floodWhile<T>(ctx: Ctx, corpus: HostileKind[], key: string, during: () => Promise<T>): Promise<{ result: T; rate: number; skipped: number; answers: Map<string, number> }> {
  const expired = await plantExpired(ctx, Math.ceil(((FLOOD_RATE / 2) * (SECONDS + 4)) / corpus.length) + 50);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const headers = { authorization: `Bearer ${key}` };
  const answers = new Map<string, number>();
  let kindIndex = 0;
  let previous: string | null = null;
  let issued = 0;
  let skipped = 0;
  let inFlight = 0;
  let requests = 0;
  const exchange = async () => {
    inFlight++;
    try {
      const c = await request(agent, `${ctx.service.base}/v1/attest/challenges`, headers);
      requests++;
      const live = c.status === 201 ? JSON.parse(c.text).nonce : randomNonce(43);
      const kind = corpus[kindIndex++ % corpus.length];
      const nonce = kind.nonce === 'live' ? live
        : kind.nonce === 'replayed' ? (previous ?? randomNonce(43))
        : kind.nonce === 'expired' ? (expired.pop() ?? randomNonce(43))
        : randomNonce(43);
      if (kind.nonce === 'live') previous = live;
      const v = await request(agent, `${ctx.service.base}/v1/attest/verify`, headers, kind.body(nonce));
      requests++;
      tally(answers, verifyAnswer(v.status, v.text));
    } catch {
      tally(answers, 'connection error');
    } finally {
      inFlight--;
    }
  };
  const pairsPerSecond = FLOOD_RATE / 2;
  const started = Date.now();
  const pacer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) / 1000) * pairsPerSecond);
    for (; issued < due; issued++) {
      if (inFlight >= 64) skipped++;
      else void exchange();
    }
  }, 5);
  await sleep(1000);
  const requests0 = requests;
  const skipped0 = skipped;
  const t0 = Date.now();
  const result = await during();
  const rate = ((requests - requests0) * 1000) / (Date.now() - t0);
  const skippedDuring = skipped - skipped0;
  await sleep(1000);
  clearInterval(pacer);
  while (inFlight > 0) await sleep(20);
  agent.destroy();
  return { result, rate, skipped: skippedDuring, answers };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
