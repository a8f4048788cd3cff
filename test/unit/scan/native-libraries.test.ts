// analyzeNativeLibraries on APKs built by aapt, zip, zipalign and apksigner: the inventory's digests against
// sha256sum, stored libraries' offsets and 16 KB verdicts against zipalign's, and deflated libraries read as the
// same files are.
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { analyzeNativeLibraries, nativeLibraryAbi } from '../../../src/scan/static/native/native-libraries';
import { storedDataOffset } from '../../../src/scan/static/native/library-bytes';
import { nativeFindings } from '../../../src/scan/static/native/native-rules';
import { open } from 'node:fs/promises';
import { nativeCorpus, type NativeApk, type NativeCorpus } from '../../fixtures/native-corpus';
import { factsOf, zipalignVerdicts } from '../../support/readelf-facts';
import { run } from '../../support/host-tools';

const NOW = new Date('2026-01-15T00:00:00Z');
let corpus: NativeCorpus;
beforeAll(async () => {
  corpus = await nativeCorpus();
}, 300_000);

const apk = (name: string) => corpus.apks.find((a) => a.name === name) as NativeApk;
const fixtureFile = (name: string) => corpus.libraries.find((l) => l.name === name)?.file as string;

async function analyze(a: NativeApk, targetSdk = 35) {
  const zip = await PackageZip.open(a.file, (n) => nativeLibraryAbi(n) !== null);
  try {
    return await analyzeNativeLibraries(zip, a.file, { targetSdk, now: NOW });
  } finally {
    zip.close();
  }
}

test('nativeLibraryAbi takes lib/<abi>/*.so only (and base/lib/ with the bundle prefix)', () => {
  expect(nativeLibraryAbi('lib/arm64-v8a/libx.so')).toBe('arm64-v8a');
  expect(nativeLibraryAbi('base/lib/x86_64/libx.so', 'base/')).toBe('x86_64');
  for (const n of ['lib/arm64-v8a/sub/libx.so', 'lib/libx.so', 'assets/lib/x86/libx.so', 'lib/x86/libx.so.1', 'base/lib/x86/libx.so']) expect(nativeLibraryAbi(n)).toBeNull();
});

test('every library is listed with its ABI and the SHA-256 sha256sum gives, stored or deflated', async () => {
  for (const a of corpus.apks) {
    const { libraries } = await analyze(a);
    expect(libraries.map((l) => l.path).sort()).toEqual(a.libraries.map((l) => l.entry).sort());
    for (const l of a.libraries) {
      const sum = (await run('sha256sum', [fixtureFile(l.fixture)])).stdout.split(' ')[0];
      expect(libraries.find((x) => x.path === l.entry)).toEqual({ path: l.entry, abi: l.entry.split('/')[1], sha256: sum });
    }
  }
});

test('a stored library\'s data offset is the one zipalign prints, and the 16 KB rule names it exactly when zipalign -c 16384 says BAD', async () => {
  let bad = 0;
  for (const name of ['stored-4k', 'stored-16k']) {
    const a = apk(name);
    const page = await zipalignVerdicts(a.file, ['-p', '4']);
    const sixteen = await zipalignVerdicts(a.file, ['16384']);
    const zip = await PackageZip.open(a.file, (n) => nativeLibraryAbi(n) !== null);
    const fh = await open(a.file, 'r');
    const { findings } = await analyzeNativeLibraries(zip, a.file, { targetSdk: 35, now: NOW });
    const detail = findings.find((f) => f.id === 'android.native-16kb-alignment')?.detail ?? '';
    for (const l of a.libraries) {
      const offset = await storedDataOffset(fh, (await fh.stat()).size, zip.entry(l.entry)!);
      expect({ entry: l.entry, offset }).toEqual({ entry: l.entry, offset: sixteen.get(l.entry)?.offset });
      expect(page.get(l.entry)?.ok).toBe(true); // zipalign -p 4: every stored library is page-aligned (4 KB)
      const named = new RegExp(`${l.entry.replace(/[.]/g, '\\.')} \\([^)]*zip offset`).test(detail);
      const misaligned = !sixteen.get(l.entry)?.ok && ['arm64-v8a', 'x86_64'].includes(l.entry.split('/')[1]);
      if (misaligned) bad++;
      expect({ entry: l.entry, named }).toEqual({ entry: l.entry, named: misaligned });
    }
    await fh.close();
    zip.close();
  }
  expect(bad).toBeGreaterThan(0); // the corpus exercises the rule
});

test('deflated libraries (one larger than what the first pass keeps) give the findings their files give', async () => {
  const a = apk('deflated');
  const { findings } = await analyze(a);
  const fromFiles = nativeFindings(await Promise.all(a.libraries.map(async (l) => ({
    path: l.entry, abi: l.entry.split('/')[1], storedOffset: null, facts: await factsOf(fixtureFile(l.fixture)),
  }))), { targetSdk: 35, now: NOW });
  expect(findings).toEqual(fromFiles);
  expect(findings.map((f) => f.id).sort()).toEqual([
    'android.native-16kb-alignment', 'android.native-executable-stack', 'android.native-no-fortify', 'android.native-no-relro',
    'android.native-no-stack-protector', 'android.native-partial-relro', 'android.native-rpath', 'android.native-text-relocations',
  ]);
});
