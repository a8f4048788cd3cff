// Protects: an entry whose local file header disagrees with the central directory (CRC-32, sizes, the data-
// descriptor flag) is refused as apksig refuses it (LocalFileRecord, which mimics what Android reads when it
// verifies): for every entry when the JAR signature is verified, and for AndroidManifest.xml always. Each mutant is
// a package signed by apksigner with one header field changed; the expected verdict is apksig's
// (tools/apksig-oracle), which reads the manifest's record itself when no minSdk is given. Also judged as apksig does:
// entries of other compression methods, and entries under META-INF/ no signature covers (a low finding where apksig
// warns).
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { androidManifest, buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { apksigVerify } from '../../support/apksig-oracle';
import { verdictRows } from '../../support/apk-verdicts';
import { run } from '../../support/host-tools';
import { scan } from './helpers';

jest.setTimeout(300_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-lfh-'));
afterAll(async () => {
  await cleanupFixtures();
  await rm(work, { recursive: true, force: true });
});

/** Local header offsets by entry name, read from the end record and central directory (APPNOTE 4.3.12, 4.3.16). */
function localHeaders(zip: Buffer): Map<string, number> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  const out = new Map<string, number>();
  for (let p = zip.readUInt32LE(eocd + 16), i = 0; i < count; i++) {
    const nameLength = zip.readUInt16LE(p + 28);
    out.set(zip.toString('utf8', p + 46, p + 46 + nameLength), zip.readUInt32LE(p + 42));
    p += 46 + nameLength + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
  }
  return out;
}

/** Local header fields a mutant changes: offset in the header and the edit. */
const FIELDS: Record<string, { at: number; edit: (b: Buffer, at: number) => void }> = {
  crc: { at: 14, edit: (b, at) => b.writeUInt32LE((b.readUInt32LE(at) ^ 1) >>> 0, at) },
  'compressed size': { at: 18, edit: (b, at) => b.writeUInt32LE(b.readUInt32LE(at) + 1, at) },
  'uncompressed size': { at: 22, edit: (b, at) => b.writeUInt32LE(b.readUInt32LE(at) + 1, at) },
  'data-descriptor flag': { at: 6, edit: (b, at) => b.writeUInt16LE(b.readUInt16LE(at) ^ 0x08, at) },
};

test('local headers that disagree with the central directory are refused as apksig refuses them', async () => {
  const packages = [
    { label: 'v1+v2, minSdk 21', minSdk: 21, file: await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'release' }) },
    { label: 'v2 only, minSdk 24', minSdk: 24, file: await buildApk({ manifest: androidManifest({ minSdk: 24, targetSdk: 34 }), sign: 'release', schemes: { v1: false, v2: true, v3: false } }) },
  ];
  const mutants: Array<{ label: string; file: string; minSdk: number }> = [];
  for (const pkg of packages) {
    const bytes = await readFile(pkg.file);
    mutants.push({ label: `${pkg.label}: as signed`, file: pkg.file, minSdk: pkg.minSdk });
    for (const [entry, offset] of localHeaders(bytes)) {
      if (entry.startsWith('META-INF/')) continue;
      for (const [field, { at, edit }] of Object.entries(FIELDS)) {
        const copy = Buffer.from(bytes);
        edit(copy, offset + at);
        const file = path.join(work, `${mutants.length}.apk`);
        await writeFile(file, copy);
        mutants.push({ label: `${pkg.label}: ${entry} ${field}`, file, minSdk: pkg.minSdk });
      }
    }
  }
  const rows = await verdictRows(mutants, { apksigReadsMinSdk: true });
  // Both verdicts occur, so agreement is not agreement on one answer.
  expect(rows.filter((r) => r.apksig).length).toBeGreaterThan(0);
  expect(rows.filter((r) => !r.apksig).length).toBeGreaterThan(4);
  for (const r of rows) expect({ mutant: r.mutant, verified: r.verified }).toEqual({ mutant: r.mutant, verified: r.apksig });
});

/** Central-directory record offsets by entry name. */
function centralRecords(zip: Buffer): Map<string, number> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const out = new Map<string, number>();
  for (let p = zip.readUInt32LE(eocd + 16), i = 0; i < zip.readUInt16LE(eocd + 10); i++) {
    const nameLength = zip.readUInt16LE(p + 28);
    out.set(zip.toString('utf8', p + 46, p + 46 + nameLength), p);
    p += 46 + nameLength + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
  }
  return out;
}

test('a compression method other than stored and deflate is judged as apksig judges it', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' });
  const bytes = await readFile(apk);
  const locals = localHeaders(bytes);
  const mutants: Array<{ label: string; file: string }> = [];
  for (const [entry, cd] of centralRecords(bytes)) {
    if (entry.startsWith('META-INF/')) continue;
    for (const method of [99, 12]) {
      const copy = Buffer.from(bytes);
      // Both headers say the new method (a mismatch would be another mutant); a stored entry stays stored bytes.
      copy.writeUInt16LE(method, cd + 10);
      copy.writeUInt16LE(method, locals.get(entry)! + 8);
      const file = path.join(work, `method-${mutants.length}.apk`);
      await writeFile(file, copy);
      mutants.push({ label: `${entry} method ${method} (was ${bytes.readUInt16LE(cd + 10)})`, file });
    }
  }
  const rows = await verdictRows(mutants);
  for (const r of rows) expect({ mutant: r.mutant, verified: r.verified }).toEqual({ mutant: r.mutant, verified: r.apksig });
  expect(rows.some((r) => r.apksig)).toBe(true);
});

test('files added under META-INF/ after signing are a low finding exactly where apksig warns of them', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' });
  const dir = path.join(work, 'meta-inf');
  await run('mkdir', ['-p', path.join(dir, 'META-INF', 'services')]);
  await writeFile(path.join(dir, 'META-INF', 'services', 'com.example.Plugin'), 'com.attacker.Plugin\n');
  const added = path.join(work, 'added.apk');
  await run('cp', [apk, added]);
  await run('zip', ['-q', '-X', added, 'META-INF/services/com.example.Plugin'], { cwd: dir });
  const [plain, withFile] = await apksigVerify([{ file: apk, minSdk: 21 }, { file: added, minSdk: 21 }]);
  expect(plain.verified && withFile.verified).toBe(true);
  const warned = (v: typeof plain) => v.warnings.some((w) => w.includes('META-INF/services/com.example.Plugin'));
  for (const [file, verdict] of [[apk, plain], [added, withFile]] as const) {
    const r = await scan(file);
    expect(r.signing?.verified).toBe(true);
    const finding = r.findings.find((f) => f.id === 'android.jar-unprotected-entry');
    expect(finding !== undefined).toBe(warned(verdict));
    if (finding) expect(finding).toMatchObject({ severity: 'low', location: 'META-INF/services/com.example.Plugin' });
  }
  expect(warned(withFile)).toBe(true);
});

test('a data descriptor flagged on both headers is judged as apksig judges it, even where no room is left for one', async () => {
  // apksig reads entries for verification without their data descriptor (LocalFileRecord.getRecord(..., false, false)):
  // the last entry before the central directory, flagged, has its "descriptor" overlap the directory (found by the
  // seeded mutation differential, test/fuzz/apk-differential.ts, seed 2 index 1757).
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' });
  const bytes = await readFile(apk);
  const records = centralRecords(bytes);
  const locals = localHeaders(bytes);
  const last = [...locals].sort((a, b) => b[1] - a[1])[0][0];
  const mutants: Array<{ label: string; file: string }> = [];
  for (const entry of new Set([last, 'META-INF/MANIFEST.MF', 'AndroidManifest.xml'])) {
    const copy = Buffer.from(bytes);
    copy.writeUInt16LE(copy.readUInt16LE(locals.get(entry)! + 6) | 0x08, locals.get(entry)! + 6);
    copy.writeUInt16LE(copy.readUInt16LE(records.get(entry)! + 8) | 0x08, records.get(entry)! + 8);
    const file = path.join(work, `descriptor-${mutants.length}.apk`);
    await writeFile(file, copy);
    mutants.push({ label: `${entry}${entry === last ? ' (last before the central directory)' : ''}`, file });
  }
  const rows = await verdictRows(mutants);
  for (const r of rows) expect({ mutant: r.mutant, verified: r.verified }).toEqual({ mutant: r.mutant, verified: r.apksig });
  expect(rows.some((r) => r.apksig)).toBe(true);
});
