/** Helpers of the scan tests: register a build for a real package file, upload it, and wait for its static scan. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Harness } from '../support/harness';
import { bearer, json } from '../support/harness';
import { put } from './uploads-support';
import { androidManifest, buildApk } from '../fixtures/build-packages';
import { writeZip } from '../hostile/zip-writer';
import { run } from '../support/host-tools';

export const FULL_SHA = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';

/** POST /v1/builds; returns the created Build (throws on any other status). */
export async function registerBuild(h: Harness, key: string, body: Record<string, unknown>): Promise<any> {
  const res = await h.api('/v1/builds', { method: 'POST', headers: json(key), body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`createBuild answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Registers a build declaring the file, and PUTs the file to the returned upload URL. */
export async function uploadPackage(h: Harness, key: string, file: string, platform: 'android' | 'ios', version = '1.2.3'): Promise<any> {
  const bytes = await readFile(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const build = await registerBuild(h, key, { platform, version, commit: FULL_SHA, artifact: { sizeBytes: bytes.length, sha256 } });
  const res = await put(build.artifact.uploadUrl, bytes);
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getBuild(h: Harness, key: string, id: string): Promise<any> {
  const res = await h.api(`/v1/builds/${id}`, { headers: bearer(key) });
  if (res.status !== 200) throw new Error(`getBuild answered ${res.status}`);
  return res.json();
}

export async function getScan(h: Harness, key: string, id: string): Promise<{ status: number; body: any }> {
  const res = await h.api(`/v1/scans/${id}`, { headers: bearer(key) });
  return { status: res.status, body: await res.json() };
}

/**
 * Reads the build until its static scan is listed. The job runs in the background on real timers (its poll loop),
 * so this waits for work to happen, not for time to pass: the service clock is never involved.
 */
export async function waitForStaticScan(h: Harness, key: string, buildId: string, deadlineMs = 30_000): Promise<any> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const build = await getBuild(h, key, buildId);
    const found = build.scans.find((s: { engine: string }) => s.engine === 'static');
    if (found) return build;
    if (Date.now() > until) throw new Error(`no static scan of ${buildId} after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An APK inside every cap whose analysis takes seconds of work, not a race: a manifest aapt compiled and eight 64 MB
 * JavaScript assets (1.5 MB deflated) that the secret search inflates and reads whole, 512 MB in all (about 12 s on
 * one core).
 */
export async function slowPackage(packageName = 'com.example.slow'): Promise<Buffer> {
  const apk = await buildApk({ manifest: androidManifest({ packageName }), sign: 'none' });
  const { stdout: manifest } = await run('unzip', ['-p', apk, 'AndroidManifest.xml'], { encoding: 'buffer', maxBuffer: 1 << 24 });
  const line = Buffer.from('const value = "hello world"; function f(a, b) { return a + b; }\n');
  const script = Buffer.alloc(64 * 1024 * 1024);
  for (let i = 0; i < script.length; i += line.length) line.copy(script, i);
  const assets = Array.from({ length: 8 }, (_, i) => ({ name: `assets/bundle${i}.js`, data: script, method: 8 as const }));
  return writeZip([{ name: 'AndroidManifest.xml', data: manifest }, ...assets]);
}
