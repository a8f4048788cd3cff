// Protects: bytes between the central directory and the end record (a ZIP64 locator, a second end record, padding)
// are judged as apksig judges them: only an overlap is refused, and the signed sections are the central directory
// as the end record declares it, so such bytes change no verdict. Each mutant is an apksigner-signed package with
// bytes inserted before its end record; the expected verdict is apksig's (tools/apksig-oracle). The analysis's own
// zip reader finds the same central directory (src/scan/static/package/central-directory.ts): such a package is
// analysed, never unreadable.
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import { androidManifest, buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { apksigVerify } from '../../support/apksig-oracle';
import { verdictRows } from '../../support/apk-verdicts';

jest.setTimeout(300_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-eocd-'));
afterAll(async () => {
  await cleanupFixtures();
  await rm(work, { recursive: true, force: true });
});

const EOCD = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

/** The package with `extra` inserted just before its end record (whose offsets stay as they were). */
function inserted(zip: Buffer, extra: (eocd: Buffer) => Buffer): Buffer {
  const at = zip.lastIndexOf(EOCD);
  const eocd = zip.subarray(at);
  return Buffer.concat([zip.subarray(0, at), extra(Buffer.from(eocd)), eocd]);
}

const zip64Locator = () => {
  const b = Buffer.alloc(20);
  b.writeUInt32LE(0x07064b50, 0);
  b.writeUInt32LE(1, 16); // one disk
  return b;
};

const INSERTS: Record<string, (eocd: Buffer) => Buffer> = {
  'a ZIP64 locator': zip64Locator,
  'a second end record': (eocd) => eocd,
  '16 zero bytes': () => Buffer.alloc(16),
  'a central directory overlap (end record moved into it)': () => Buffer.alloc(0),
};

test('bytes between the central directory and the end record are judged as apksig judges them', async () => {
  const packages = [
    { label: 'v1+v2', minSdk: 21, file: await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'release' }) },
    { label: 'v1 only', minSdk: 21, file: await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' }) },
  ];
  const mutants: Array<{ label: string; file: string; minSdk: number }> = [];
  for (const pkg of packages) {
    const bytes = await readFile(pkg.file);
    for (const [name, extra] of Object.entries(INSERTS)) {
      let copy = inserted(bytes, extra);
      if (name.startsWith('a central directory overlap')) {
        // The end record says the central directory is 4 bytes longer than it is: it overlaps the end record.
        const at = copy.lastIndexOf(EOCD);
        copy.writeUInt32LE(copy.readUInt32LE(at + 12) + 4, at + 12);
      }
      const file = path.join(work, `${mutants.length}.apk`);
      await writeFile(file, copy);
      mutants.push({ label: `${pkg.label}: ${name}`, file, minSdk: pkg.minSdk });
    }
  }
  const rows = await verdictRows(mutants);
  expect(rows.filter((r) => r.apksig).length).toBeGreaterThan(0);
  expect(rows.filter((r) => !r.apksig).length).toBeGreaterThan(0);
  for (const r of rows) expect({ mutant: r.mutant, verified: r.verified }).toEqual({ mutant: r.mutant, verified: r.apksig });
});

test('the analysis reads such packages as Android\'s zip library does: a verdict for each, the same as apksig\'s', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' });
  const bytes = await readFile(apk);
  const at = bytes.lastIndexOf(EOCD);
  const withDisks = Buffer.from(bytes);
  withDisks.writeUInt16LE(3, at + 4); // number of this disk
  withDisks.writeUInt16LE(5, at + 6); // disk where the central directory starts
  const mutants: Record<string, Buffer> = {
    'non-zero disk numbers in the end record': withDisks,
    'a ZIP64 locator before the end record': inserted(bytes, zip64Locator),
    'a second end record': inserted(bytes, (eocd) => eocd),
  };
  const files = [];
  for (const [name, data] of Object.entries(mutants)) {
    const file = path.join(work, `analysis-${files.length}.apk`);
    await writeFile(file, data);
    files.push({ name, file });
  }
  const verdicts = await apksigVerify(files.map((f) => ({ file: f.file, minSdk: 21 })));
  for (const [i, f] of files.entries()) {
    const r = await analyzePackage(f.file, 'android');
    expect({ mutant: f.name, ids: r.findings.map((x) => x.id).filter((id) => id.startsWith('package.') || id === 'scan.incomplete') }).toEqual({ mutant: f.name, ids: [] });
    expect({ mutant: f.name, verified: r.signing?.verified }).toEqual({ mutant: f.name, verified: verdicts[i].verified });
  }
});
