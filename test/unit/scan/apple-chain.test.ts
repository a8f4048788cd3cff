// Protects: the chain an iOS signer needs before the scan names its team (src/scan/static/ios/apple-chain.ts). The
// bundled Apple CAs are Apple's (each root's SHA-256 is the one Apple publishes, each WWDR intermediate verifies
// under its root by openssl); certificates Apple's WWDR issued are trusted exactly when `openssl verify` against
// those CAs accepts them at the same time; certificates openssl makes that copy a real team's subject (under a fake
// "Apple" root and WWDR intermediate, or self-signed) are refused, as openssl refuses them against Apple's CAs.
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { APPLE_ROOTS, APPLE_WWDR_INTERMEDIATES } from '../../../src/scan/static/ios/apple-roots';
import { appleAnchors, checkSignerChain, trustAnchors } from '../../../src/scan/static/ios/apple-chain';
import { makeCertificate, certificateDer, type TestCertificate } from '../../fixtures/test-ca';
import { run } from '../../support/host-tools';

jest.setTimeout(60_000);

/** What Apple publishes at https://www.apple.com/certificateauthority/ for its roots. */
const PUBLISHED_ROOT_SHA256: Record<string, string> = {
  'Apple Root CA': 'B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024',
  'Apple Root CA - G3': '63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179',
};
const APPLE_LEAVES = ['apple-signed-apple-development.cer', 'apple-signed-apple-distribution.cer'].map((f) => path.join(__dirname, '..', '..', 'fixtures', 'apple', f));

let dir: string;
let rootsFile: string;
let intermediatesFile: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'apple-chain-'));
  rootsFile = path.join(dir, 'roots.pem');
  intermediatesFile = path.join(dir, 'intermediates.pem');
  await writeFile(rootsFile, APPLE_ROOTS.map((c) => c.pem).join(''));
  await writeFile(intermediatesFile, APPLE_WWDR_INTERMEDIATES.map((c) => c.pem).join(''));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function openssl(args: string[]): Promise<string> {
  return (await run('openssl', args)).stdout.trim();
}

async function pemFile(name: string, pem: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, pem);
  return file;
}

/** openssl's facts about a PEM: SHA-256 fingerprint (hex, no colons), subject, issuer, dates (ISO). */
async function facts(file: string) {
  const fp = (await openssl(['x509', '-in', file, '-noout', '-fingerprint', '-sha256'])).split('=')[1].replace(/:/g, '');
  const name = async (which: string) => (await openssl(['x509', '-in', file, '-noout', `-${which}`, '-nameopt', 'RFC2253'])).replace(/^\w+=/, '');
  const date = async (which: string) => new Date((await openssl(['x509', '-in', file, '-noout', `-${which}`])).split('=')[1]).toISOString().replace(/\.000Z$/, 'Z');
  return { sha256: fp, subject: await name('subject'), issuer: await name('issuer'), validity: [await date('startdate'), await date('enddate')] };
}

/**
 * openssl's verdict on a chain at a time. -ignore_critical: Apple's leaves carry Apple's own critical extensions
 * (1.2.840.113635.100.6.1.x, which codesign reads) that openssl does not know; the chain is what is compared here.
 */
async function opensslVerifies(leafPem: string, at: Date, cafile = rootsFile, untrusted = intermediatesFile): Promise<boolean> {
  const args = ['verify', '-ignore_critical', '-attime', String(Math.floor(at.getTime() / 1000)), '-CAfile', cafile, '-untrusted', untrusted, leafPem];
  return run('openssl', args).then(() => true, () => false);
}

async function derToPem(der: string): Promise<string> {
  const out = path.join(dir, `${path.basename(der)}.pem`);
  await run('openssl', ['x509', '-inform', 'DER', '-in', der, '-out', out]);
  return out;
}

describe('the bundled Apple CAs', () => {
  it('are Apple\'s roots, with the fingerprints Apple publishes, as openssl reads them', async () => {
    expect(APPLE_ROOTS.map((r) => r.name).sort()).toEqual(Object.keys(PUBLISHED_ROOT_SHA256).sort());
    for (const root of APPLE_ROOTS) {
      const read = await facts(await pemFile(`${root.file}.pem`, root.pem));
      expect(read.sha256).toBe(PUBLISHED_ROOT_SHA256[root.name]);
      expect(root.sha256).toBe(read.sha256);
      expect(read.subject).toBe(read.issuer);
      expect(read.subject).toContain(`CN=${root.name}`);
      expect(read.subject).toContain('O=Apple Inc.');
      expect(root.validity).toEqual(read.validity);
    }
  });

  it('are WWDR intermediates whose signatures openssl verifies under the root that issued them', async () => {
    for (const intermediate of APPLE_WWDR_INTERMEDIATES) {
      const file = await pemFile(`${intermediate.file}.pem`, intermediate.pem);
      const read = await facts(file);
      const root = APPLE_ROOTS.find((r) => r.name === intermediate.issuer)!;
      expect(read.issuer).toContain(`CN=${root.name}`);
      expect(read.subject).toMatch(/CN=Apple Worldwide Developer Relations (Certification Authority|CA - G2)/);
      expect(intermediate.sha256).toBe(read.sha256);
      expect(intermediate.validity).toEqual(read.validity);
      const rootFile = await pemFile(`${root.file}.pem`, root.pem);
      await expect(openssl(['verify', '-no_check_time', '-CAfile', rootFile, file])).resolves.toBe(`${file}: OK`);
    }
    // Every one is kept by the chain check: none was refused as not issued by a bundled root.
    expect(appleAnchors().intermediates.map((i) => i.cert.fingerprint256.replace(/:/g, ''))).toEqual(APPLE_WWDR_INTERMEDIATES.map((i) => i.sha256));
  });
});

describe('a certificate Apple issued', () => {
  it.each(APPLE_LEAVES)('is trusted exactly when openssl verify accepts it at that time (%s)', async (der) => {
    const pem = await derToPem(der);
    const bytes = await readFile(der);
    const cert = new X509Certificate(bytes);
    const [from, to] = [new Date(cert.validFrom), new Date(cert.validTo)];
    const times = [new Date((from.getTime() + to.getTime()) / 2), new Date(from.getTime() - 86_400_000), new Date(to.getTime() + 86_400_000)];
    const verdicts = [];
    for (const at of times) {
      const expected = await opensslVerifies(pem, at);
      const got = checkSignerChain(bytes, { signedAt: null, now: at });
      expect(got.trusted).toBe(expected);
      verdicts.push(expected);
    }
    // The oracle said yes once and no twice: both outcomes were compared.
    expect(verdicts).toEqual([true, false, false]);
    const trusted = checkSignerChain(bytes, { signedAt: null, now: times[0] });
    const ou = (await openssl(['x509', '-in', pem, '-noout', '-subject', '-nameopt', 'sep_multiline,sname'])).split('\n').map((l) => l.trim()).find((l) => l.startsWith('OU='))?.slice(3);
    const spki = (await run('sh', ['-c', `openssl x509 -in '${pem}' -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -r`])).stdout.split(' ')[0];
    expect(trusted).toEqual({ trusted: true, teamId: ou, keySha256: spki });
  });

  it('is refused when it expired before the scan, whatever time it claims to have signed at', async () => {
    const bytes = await readFile(APPLE_LEAVES[0]);
    const cert = new X509Certificate(bytes);
    const signedAt = new Date(cert.validFrom);
    const now = new Date(new Date(cert.validTo).getTime() + 1000);
    expect(await opensslVerifies(await derToPem(APPLE_LEAVES[0]), now)).toBe(false);
    const verdict = checkSignerChain(bytes, { signedAt, now });
    expect(verdict.trusted).toBe(false);
    expect(!verdict.trusted && verdict.reason).toContain('not valid at the scan\'s time');
  });
});

describe('certificates made by openssl that copy a real team\'s subject', () => {
  let subject: string;
  let fakeRoot: TestCertificate;
  let fakeIntermediate: TestCertificate;
  const cert = async (name: string, spec: Parameters<typeof makeCertificate>[1]) => {
    await mkdir(path.join(dir, name));
    return makeCertificate(path.join(dir, name), spec);
  };
  // A time every certificate here is valid at (test certificates: 2020 to 2040).
  const at = new Date('2026-01-15T12:00:00Z');

  beforeAll(async () => {
    // The subject of Apple's certificate, as openssl prints it for -subj.
    subject = (await openssl(['x509', '-inform', 'DER', '-in', APPLE_LEAVES[0], '-noout', '-subject', '-nameopt', 'compat'])).replace(/^subject=/, '');
    expect(subject).toContain('/OU=MK22MZP987/');
    fakeRoot = await cert('fake-root', { subject: '/C=US/O=Apple Inc./OU=Apple Certification Authority/CN=Apple Root CA', kind: 'ca' });
    fakeIntermediate = await cert('fake-wwdr', { subject: '/CN=Apple Worldwide Developer Relations Certification Authority/OU=G3/O=Apple Inc./C=US', kind: 'ca', issuer: fakeRoot });
  });

  it('are refused under a fake Apple root and WWDR intermediate, and trusted only when that CA is the anchor', async () => {
    const leaf = await cert('copied-leaf', { subject, kind: 'leaf', issuer: fakeIntermediate });
    const bytes = await certificateDer(leaf.certPem);
    expect(await opensslVerifies(leaf.certPem, at)).toBe(false);
    expect(checkSignerChain(bytes, { signedAt: null, now: at })).toEqual({ trusted: false, reason: 'it is not issued by an Apple Worldwide Developer Relations CA' });
    // The same check with the fake CA as the anchor accepts it, as openssl does: what decides is the anchor.
    expect(await opensslVerifies(leaf.certPem, at, fakeRoot.certPem, fakeIntermediate.certPem)).toBe(true);
    const fake = trustAnchors([await readFile(fakeRoot.certPem, 'utf8')], [await readFile(fakeIntermediate.certPem, 'utf8')]);
    expect(checkSignerChain(bytes, { signedAt: null, now: at }, fake)).toMatchObject({ trusted: true, teamId: 'MK22MZP987' });
  });

  it('are refused when self-signed, under Apple\'s CAs or any other', async () => {
    const leaf = await cert('self-signed', { subject, kind: 'leaf', extensions: 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=critical,codeSigning\n' });
    const bytes = await certificateDer(leaf.certPem);
    const fake = trustAnchors([await readFile(fakeRoot.certPem, 'utf8')], [await readFile(fakeIntermediate.certPem, 'utf8')]);
    expect(await opensslVerifies(leaf.certPem, at)).toBe(false);
    expect(await opensslVerifies(leaf.certPem, at, fakeRoot.certPem, fakeIntermediate.certPem)).toBe(false);
    for (const anchors of [appleAnchors(), fake]) {
      expect(checkSignerChain(bytes, { signedAt: null, now: at }, anchors)).toEqual({ trusted: false, reason: 'it is self-signed, not issued by Apple' });
    }
  });

  it('are refused when the chain holds but the leaf is not for code signing, as openssl reads its extensions', async () => {
    const leaf = await cert('client-auth', { subject, kind: 'leaf', issuer: fakeIntermediate, extensions: 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\nauthorityKeyIdentifier=keyid\n' });
    const fake = trustAnchors([await readFile(fakeRoot.certPem, 'utf8')], [await readFile(fakeIntermediate.certPem, 'utf8')]);
    expect(await opensslVerifies(leaf.certPem, at, fakeRoot.certPem, fakeIntermediate.certPem)).toBe(true);
    expect(await openssl(['x509', '-in', leaf.certPem, '-noout', '-ext', 'extendedKeyUsage'])).not.toContain('Code Signing');
    const verdict = checkSignerChain(await certificateDer(leaf.certPem), { signedAt: null, now: at }, fake);
    expect(verdict).toEqual({ trusted: false, reason: 'it is not a code signing certificate (no code signing extended key usage)' });
  });

  it('are refused at a signing time before the certificate was valid, as openssl refuses it at that time', async () => {
    const leaf = await cert('later-leaf', { subject, kind: 'leaf', issuer: fakeIntermediate, startDate: '20250101000000Z' });
    const fake = trustAnchors([await readFile(fakeRoot.certPem, 'utf8')], [await readFile(fakeIntermediate.certPem, 'utf8')]);
    const bytes = await certificateDer(leaf.certPem);
    const before = new Date('2024-06-01T00:00:00Z');
    const after = new Date('2025-06-01T00:00:00Z');
    expect(await opensslVerifies(leaf.certPem, before, fakeRoot.certPem, fakeIntermediate.certPem)).toBe(false);
    expect(await opensslVerifies(leaf.certPem, after, fakeRoot.certPem, fakeIntermediate.certPem)).toBe(true);
    expect(checkSignerChain(bytes, { signedAt: before, now: at }, fake)).toEqual({ trusted: false, reason: 'the signing certificate was not valid at its signing time, 2024-06-01T00:00:00Z' });
    expect(checkSignerChain(bytes, { signedAt: after, now: at }, fake).trusted).toBe(true);
  });

  it('never throw on bytes that are not a certificate', () => {
    expect(checkSignerChain(Buffer.from('not a certificate'), { signedAt: null, now: at })).toEqual({ trusted: false, reason: 'the signing certificate cannot be read' });
  });
});
