// The hostile corpus: packages written as an attacker who has read the analyser would write them, each built
// here from a real package (aapt, apksigner, plistutil) or from scratch, never kept as an opaque blob.
// Every one must end its scan within the deadline with a high or critical finding and grade F.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { androidManifest, buildAab, buildApk, buildIpa } from '../fixtures/build-packages';
import { sharedReferencePlist } from './binary-plist';
import { writeZip, type ZipEntry } from './zip-writer';
import { run } from '../support/host-tools';


export type HostileCase = { name: string; platform: 'android' | 'ios'; file: string; bytes: number };

/**
 * `full`: the sizes of the attacks as reported (for the bench); `test`: the same attacks scaled down to what
 * still crosses every limit they aim at, so the integration test stays short.
 */
export type Scale = 'full' | 'test';

const SIZES = {
  full: { xmlPi: 4 * 1024 * 1024, zipEntries: 200_000, signatureFiles: 10_000, nesting: 50_000, overlapping: 10_000 },
  test: { xmlPi: 1024 * 1024, zipEntries: 70_000, signatureFiles: 1_000, nesting: 5_000, overlapping: 1_000 },
} as const;

const INFO = 'Payload/Example.app/Info.plist';

/** Builds every case into a fresh temporary folder; returns them in a fixed order. */
export async function buildHostileCorpus(scale: Scale): Promise<HostileCase[]> {
  const size = SIZES[scale];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'shieldgate-hostile-'));
  const cases: HostileCase[] = [];
  const add = async (name: string, platform: 'android' | 'ios', data: Buffer) => {
    const file = path.join(dir, `${name}.${platform === 'ios' ? 'ipa' : 'apk'}`);
    await writeFile(file, data);
    cases.push({ name, platform, file, bytes: data.length });
  };

  const apkFile = await buildApk({ manifest: androidManifest({ minSdk: 24, targetSdk: 34 }), sign: 'release' });
  const apk = await entries(apkFile);
  const manifest = apk.get('AndroidManifest.xml')!;

  // Binary plist: 26 arrays each listing the next twice (2^26 values if references are copied).
  await add('bplist-shared-references', 'ios', writeZip([{ name: INFO, data: sharedReferencePlist(26), method: 8 }]));
  // XML plist made of nothing but processing-instruction openers (quadratic in a naive tokenizer).
  await add('xml-plist-pi-openers', 'ios', writeZip([{ name: INFO, data: Buffer.from('<?'.repeat(size.xmlPi / 2)), method: 8 }]));
  // XML plist nested deeper than any real one.
  const nested = `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>a</key>${'<array>'.repeat(size.nesting)}${'</array>'.repeat(size.nesting)}</dict></plist>`;
  await add('xml-plist-deep-nesting', 'ios', writeZip([{ name: INFO, data: Buffer.from(nested), method: 8 }]));

  // A zip of tiny entries, more than a classic central directory holds (Zip64 end records).
  const tiny: ZipEntry[] = [{ name: 'AndroidManifest.xml', data: manifest, method: 8 }];
  for (let i = 0; i < size.zipEntries; i++) tiny.push({ name: `assets/${i}`, data: Buffer.from([i & 0xff]) });
  await add('zip-tiny-entries', 'android', writeZip(tiny));

  // The real v1 signature, repeated under thousands of names.
  const sf = [...apk].find(([n]) => /^META-INF\/[^/]+\.SF$/.test(n))![1];
  const rsa = [...apk].find(([n]) => /^META-INF\/[^/]+\.RSA$/.test(n))![1];
  const signed: ZipEntry[] = [
    { name: 'AndroidManifest.xml', data: manifest, method: 8 },
    { name: 'META-INF/MANIFEST.MF', data: apk.get('META-INF/MANIFEST.MF')!, method: 8 },
  ];
  for (let i = 0; i < size.signatureFiles; i++) signed.push({ name: `META-INF/S${i}.SF`, data: sf, method: 8 }, { name: `META-INF/S${i}.RSA`, data: rsa });
  await add('v1-signature-files', 'android', writeZip(signed));

  // A manifest whose string pool alone is past the manifest cap: real aapt output of 300 distinct 30 KB strings.
  await add('manifest-huge-string-pool', 'android', await hugeStringPoolApk());

  // Compiled XML nested far deeper than any real manifest: one element's start repeated, then its end.
  await add('manifest-deep-nesting', 'android', writeZip([{ name: 'AndroidManifest.xml', data: nestAxml(manifest, size.nesting), method: 8 }]));

  // Thousands of central-directory records sharing one local entry of random bytes, the manifest among them.
  const shared: ZipEntry[] = [{ name: 'assets/blob', data: Buffer.from(Array.from({ length: 65_536 }, (_, i) => (i * 2654435761) >>> 24)) }];
  shared.push({ name: 'AndroidManifest.xml', data: Buffer.alloc(0), sameDataAs: 0 });
  for (let i = 0; i < size.overlapping; i++) shared.push({ name: `classes${i}.dex`, data: Buffer.alloc(0), sameDataAs: 0 });
  await add('zip-overlapping-entries', 'android', writeZip(shared));

  // A small deflated manifest whose headers declare 4 GB.
  await add('entry-declares-4gb', 'android', writeZip([{ name: 'AndroidManifest.xml', data: manifest, method: 8, declaredSize: 0xfffffff0 }]));

  // Truncations of each kind of real package: half of it, and all but the last 10 bytes (inside the end record).
  const real: Array<[string, 'android' | 'ios', Buffer]> = [
    ['apk', 'android', await readFile(apkFile)],
    ['aab', 'android', await readFile(await buildAab({ manifest: androidManifest({ minSdk: 24, targetSdk: 34 }) }))],
    ['ipa', 'ios', await readFile(await buildIpa({ binary: true, infoPlist: { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0' }, provision: {} }))],
  ];
  for (const [kind, platform, bytes] of real) {
    await add(`truncated-${kind}-half`, platform, bytes.subarray(0, bytes.length >> 1));
    await add(`truncated-${kind}-end`, platform, bytes.subarray(0, bytes.length - 10));
  }
  return cases;
}

async function hugeStringPoolApk(): Promise<Buffer> {
  const body = Array.from({ length: 300 }, (_, i) => `<meta-data android:name="k${i}" android:value="${`${i}-`.repeat(10_000).slice(0, 30_000)}"/>`).join('\n');
  const file = await buildApk({ manifest: androidManifest({ minSdk: 24, targetSdk: 34, body }), sign: 'none' });
  return readFile(file);
}

const START_ELEMENT = 0x0102;
const END_ELEMENT = 0x0103;

/**
 * Rewrites a compiled (AXML) manifest so that the first element after the root is opened `depth` times before
 * it is closed as often: the chunks are those aapt wrote, only repeated.
 */
function nestAxml(axml: Buffer, depth: number): Buffer {
  const chunks: Buffer[] = [];
  for (let at = axml.readUInt16LE(2); at < axml.length; ) {
    const size = axml.readUInt32LE(at + 4);
    chunks.push(axml.subarray(at, at + size));
    at += size;
  }
  const starts = chunks.map((c, i) => (c.readUInt16LE(0) === START_ELEMENT ? i : -1)).filter((i) => i >= 0);
  const inner = starts[1];
  if (inner === undefined || chunks[inner + 1]?.readUInt16LE(0) !== END_ELEMENT) throw new Error('manifest has no empty second element to nest');
  const body = [...chunks.slice(0, inner), ...Array<Buffer>(depth).fill(chunks[inner]), ...Array<Buffer>(depth).fill(chunks[inner + 1]), ...chunks.slice(inner + 2)];
  const header = Buffer.from(axml.subarray(0, axml.readUInt16LE(2)));
  const out = Buffer.concat([header, ...body]);
  out.writeUInt32LE(out.length, 4);
  return out;
}

/** Every entry of a real package, by name (unzip is the reference reader here). */
async function entries(zip: string): Promise<Map<string, Buffer>> {
  const { stdout } = await run('unzip', ['-Z1', zip]);
  const out = new Map<string, Buffer>();
  for (const name of stdout.split('\n').filter(Boolean)) {
    out.set(name, (await run('unzip', ['-p', zip, name], { encoding: 'buffer', maxBuffer: 64 << 20 })).stdout);
  }
  return out;
}
