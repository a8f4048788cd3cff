// Protects: a v1 signature's SignerInfo names its certificate by issuer and serial, and the verifier finds that
// certificate as apksig does, comparing X.500 names in canonical form (src/scan/static/signing/x500-name.ts), not
// bytes. Each fixture is an apksigner-signed APK whose SignerInfo issuer is re-encoded (PrintableString, UTF8String,
// T61String, BMPString, other case, extra spaces); the expected verdict is apksig's (tools/apksig-oracle), never ours.
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { verifyApk } from '../../../src/scan/static/signing/apk-verifier';
import { buildApk, cleanupFixtures, androidManifest } from '../../fixtures/build-packages';
import { apksigVerify, describeApksigVerdict } from '../../support/apksig-oracle';
import { nodeAt, parseDer, writeDer, type DerNode } from '../../support/der-tree';
import { run } from '../../support/host-tools';

jest.setTimeout(300_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-x500-'));
afterAll(async () => {
  await cleanupFixtures();
  await rm(work, { recursive: true, force: true });
});

const PRINTABLE = 0x13;
const UTF8 = 0x0c;
const T61 = 0x14;
const BMP = 0x1e;

type Edit = (text: string, tag: number) => { tag: number; content: Buffer };
const EDITS: Record<string, Edit> = {
  'as signed': (t, tag) => ({ tag, content: Buffer.from(t, 'utf8') }),
  PrintableString: (t) => ({ tag: PRINTABLE, content: Buffer.from(t, 'latin1') }),
  UTF8String: (t) => ({ tag: UTF8, content: Buffer.from(t, 'utf8') }),
  T61String: (t) => ({ tag: T61, content: Buffer.from(t, 'latin1') }),
  BMPString: (t) => ({ tag: BMP, content: Buffer.from(t, 'utf16le').swap16() }),
  'other case': (t, tag) => ({ tag, content: Buffer.from(t.toUpperCase(), 'utf8') }),
  'extra spaces': (t, tag) => ({ tag, content: Buffer.from(`  ${t.replace(/ /g, '   ')} `, 'utf8') }),
  'another name': (t, tag) => ({ tag, content: Buffer.from(`${t}x`, 'utf8') }),
};

/** The SignerInfo's issuer Name inside a PKCS#7 ContentInfo: content [0] -> SignedData -> signerInfos -> first -> issuerAndSerial -> issuer. */
const ISSUER_PATH = [1, 0, -1, 0, 1, 0];

/** Rewrites every string value of the issuer Name through `edit`. */
function editIssuer(block: Buffer, edit: Edit): Buffer {
  const root = parseDer(block).node;
  const issuer = nodeAt(root, ISSUER_PATH);
  for (const rdn of issuer.children!) {
    for (const ava of rdn.children!) {
      const value = ava.children![1];
      const edited = edit(value.content.toString(value.tag === BMP ? 'utf16le' : 'utf8'), value.tag);
      Object.assign(value, { tag: edited.tag, content: edited.content, children: null } satisfies Partial<DerNode>);
    }
  }
  return writeDer(root);
}

test('the SignerInfo issuer is matched as apksig matches it, whatever string type, case and spacing encode it', async () => {
  const apk = await buildApk({ manifest: androidManifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' });
  const { stdout: names } = await run('unzip', ['-Z1', apk]);
  const blockName = names.split('\n').find((n) => /^META-INF\/[^/]+\.RSA$/.test(n))!;
  const { stdout: block } = await run('unzip', ['-p', apk, blockName], { encoding: 'buffer', maxBuffer: 1 << 20 });
  const files: Array<{ edit: string; file: string }> = [];
  for (const [name, edit] of Object.entries(EDITS)) {
    const dir = path.join(work, name.replace(/ /g, '-'));
    await run('mkdir', ['-p', path.join(dir, 'META-INF')]);
    await writeFile(path.join(dir, blockName), editIssuer(block, edit));
    const file = path.join(dir, 'app.apk');
    await run('cp', [apk, file]);
    await run('zip', ['-q', '-X', file, blockName], { cwd: dir });
    files.push({ edit: name, file });
  }
  const verdicts = await apksigVerify(files.map((f) => ({ file: f.file, minSdk: 21 })));
  const rows = await Promise.all(files.map(async (f, i) => ({
    edit: f.edit,
    apksig: verdicts[i].verified,
    ours: (await verifyApk(f.file, { minSdk: 21, targetSdk: 29 })).verified,
    why: describeApksigVerdict(verdicts[i]),
  })));
  // The fixtures span both verdicts, so agreement is not agreement on one answer.
  expect(rows.find((r) => r.edit === 'as signed')?.apksig).toBe(true);
  expect(rows.find((r) => r.edit === 'another name')?.apksig).toBe(false);
  for (const r of rows) expect({ edit: r.edit, verified: r.ours }).toEqual({ edit: r.edit, verified: r.apksig });
});
