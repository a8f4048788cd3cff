/**
 * The content-heavy package of npm run bench:scan: an APK of about 300 MB holding about 200 MB of native libraries and
 * 80 MB of DEX, built by the real tools: the libraries by gcc and aarch64-linux-gnu-gcc (hardened flags, 16 KB
 * pages), grown to 20 MB each by objcopy with a section of random bytes (the size of a game engine or an ML runtime);
 * the DEX files by smali from classes holding 50,000 strings each; the package by aapt, zip (libraries stored, DEX
 * deflated), assets (a 36 MB binary model, stored, and 4 MB of JSON configuration, deflated, which the secret scan
 * reads), zipalign and apksigner (v2 + v3, minSdk 24, as AGP signs; this apksigner aligns stored libraries to 4 KB,
 * which the scan rightly reports).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { androidManifest, keystore, STOREPASS, FRAMEWORK_RES } from '../test/fixtures/build-packages';
import { run } from '../test/support/host-tools';

const MB = 1024 * 1024;
const LIBRARY_MB = 20;
const LIBRARIES: Array<{ abi: string; cc: string; objcopy: string }> = [
  { abi: 'arm64-v8a', cc: 'aarch64-linux-gnu-gcc', objcopy: 'aarch64-linux-gnu-objcopy' },
  { abi: 'x86_64', cc: 'gcc', objcopy: 'objcopy' },
];
const LIBRARIES_PER_ABI = 5;
const DEX_FILES = 8;
const STRINGS_PER_DEX = 50_000;
/** Class names of SDKs the inventory should recognise, one per DEX file. */
const SDK_CLASSES = ['Lcom/google/firebase/analytics/FirebaseAnalytics;', 'Lio/sentry/Sentry;', 'Lokhttp3/OkHttpClient;', 'Lcom/appsflyer/AppsFlyerLib;'];

const SOURCE = `#include <string.h>
#include <stdio.h>
int shieldgate_bench(const char *in, char *out, unsigned n) { char buf[64]; strncpy(buf, in, sizeof buf - 1); buf[63] = 0; return snprintf(out, n, "%s:%u", buf, n); }
`;

/** Builds the package in a fresh temporary folder and returns its path (the caller removes the folder). */
export async function buildContentApk(): Promise<{ file: string; dir: string; nativeBytes: number; dexBytes: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-contents-'));
  const stage = path.join(dir, 'stage');
  fs.writeFileSync(path.join(dir, 'lib.c'), SOURCE);
  let nativeBytes = 0;
  for (const { abi, cc, objcopy } of LIBRARIES) {
    const base = path.join(dir, `base-${abi}.so`);
    await run(cc, ['-shared', '-O2', '-fPIC', '-fstack-protector-strong', '-D_FORTIFY_SOURCE=2', '-Wl,-z,relro,-z,now,-z,noexecstack,-z,max-page-size=16384', path.join(dir, 'lib.c'), '-o', base]);
    fs.mkdirSync(path.join(stage, 'lib', abi), { recursive: true });
    for (let i = 0; i < LIBRARIES_PER_ABI; i++) {
      const payload = path.join(dir, 'payload.bin');
      fs.writeFileSync(payload, randomBytes(LIBRARY_MB * MB));
      const out = path.join(stage, 'lib', abi, `libengine${i}.so`);
      await run(objcopy, ['--add-section', `.engine_data=${payload}`, base, out]);
      nativeBytes += fs.statSync(out).size;
    }
  }
  let dexBytes = 0;
  for (let d = 0; d < DEX_FILES; d++) {
    const src = path.join(dir, `smali-${d}`);
    fs.mkdirSync(src, { recursive: true });
    fs.writeFileSync(path.join(src, 'Strings.smali'), smaliStrings(`Lcom/example/bench/Strings${d};`, STRINGS_PER_DEX));
    fs.writeFileSync(path.join(src, 'Sdk.smali'), `.class public ${SDK_CLASSES[d % SDK_CLASSES.length]}\n.super Ljava/lang/Object;\n`);
    const out = path.join(stage, d === 0 ? 'classes.dex' : `classes${d + 1}.dex`);
    await run('smali', ['assemble', '-o', out, src], { maxBuffer: 16 * MB });
    dexBytes += fs.statSync(out).size;
  }
  fs.mkdirSync(path.join(stage, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(stage, 'assets', 'model.tflite'), randomBytes(36 * MB));
  fs.writeFileSync(path.join(stage, 'assets', 'config.json'), jsonConfig(4 * MB));
  const manifest = path.join(dir, 'AndroidManifest.xml');
  fs.writeFileSync(manifest, androidManifest({ packageName: 'com.example.bench.contents', minSdk: 24, targetSdk: 36, application: { 'android:allowBackup': 'false', 'android:extractNativeLibs': 'false' } }));
  const unaligned = path.join(dir, 'unaligned.apk');
  await run('aapt', ['package', '-f', '-M', manifest, '-I', FRAMEWORK_RES, '-F', unaligned]);
  await run('zip', ['-q', '-r', '-0', unaligned, 'lib', 'assets/model.tflite'], { cwd: stage });
  await run('zip', ['-q', '-6', unaligned, 'assets/config.json', ...fs.readdirSync(stage).filter((n) => n.endsWith('.dex'))], { cwd: stage });
  const aligned = path.join(dir, 'aligned.apk');
  await run('zipalign', ['-f', '16384', unaligned, aligned]);
  const file = path.join(dir, 'contents.apk');
  await run('apksigner', ['sign', '--ks', await keystore('release'), '--ks-pass', `pass:${STOREPASS}`, '--key-pass', `pass:${STOREPASS}`,
    '--v1-signing-enabled', 'false', '--v2-signing-enabled', 'true', '--v3-signing-enabled', 'true', '--v4-signing-enabled', 'false',
    '--min-sdk-version', '24', '--out', file, aligned], { maxBuffer: MB });
  fs.rmSync(stage, { recursive: true, force: true });
  return { file, dir, nativeBytes, dexBytes };
}

/** A smali class whose methods load `count` distinct 190-character strings (5,000 per method). */
function smaliStrings(descriptor: string, count: number): string {
  const lines = [`.class public ${descriptor}`, '.super Ljava/lang/Object;'];
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let m = 0; m * 5000 < count; m++) {
    lines.push(`.method public static m${m}()V`, '    .registers 1');
    for (let i = m * 5000; i < Math.min(count, (m + 1) * 5000); i++) {
      const bytes = randomBytes(190);
      let s = '';
      for (const b of bytes) s += alphabet[b % alphabet.length];
      lines.push(`    const-string/jumbo v0, "${s}"`);
    }
    lines.push('    return-void', '.end method');
  }
  return `${lines.join('\n')}\n`;
}

/** JSON of about `bytes` bytes: feature flags and endpoints, the kind of configuration apps ship in assets/. */
function jsonConfig(bytes: number): string {
  const entries: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const entry = `"feature_${i}":{"enabled":${i % 3 === 0},"endpoint":"https://api.example.com/v2/feature/${i}","rollout":${(i * 7) % 100},"token_hint":"${randomBytes(12).toString('hex')}"}`;
    entries.push(entry);
    size += entry.length + 1;
  }
  return `{${entries.join(',')}}`;
}
