// Protects: an IPA names a team only when its signer chains to Apple (docs/scan-evidence.md, "The iOS seal"). Bundles
// signed by rcodesign with certificates openssl made (a leaf under a fake "Apple" root and WWDR intermediate, carried
// in the signature or not; a self-signed leaf with the same subject) are, under Apple's CAs as the service checks
// them, not verified, name no team and get the critical ios.signer-untrusted, though rcodesign verifies their code
// signature; the test CA named as the anchor makes the same bundle verified. A signingTime before the certificate
// was valid, or a certificate expired at the scan's time, is refused where openssl verify refuses it at that time.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import type { IosSigning } from '../../../src/scan/model/types';
import { buildIpa, cleanupFixtures, iosSigningIdentity, IOS_TEAM_ID, rcodesignVerify, type IosSigner } from '../../fixtures/build-packages';
import { makeCertificate, type CertificateSpec } from '../../fixtures/test-ca';
import { ids, NOW, only, scan } from './helpers';
import { APPLE_ROOTS, APPLE_WWDR_INTERMEDIATES } from '../../../src/scan/static/ios/apple-roots';
import { run } from '../../support/host-tools';

jest.setTimeout(120_000);

const RCODESIGN = path.resolve(__dirname, '..', '..', '..', '.cache', 'bin', 'rcodesign');
afterAll(cleanupFixtures);

const INFO = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0', MinimumOSVersion: '16.0' };
let work: string;
let appleRoots: string;
let appleIntermediates: string;
let counter = 0;

beforeAll(async () => {
  const id = await iosSigningIdentity();
  work = path.join(path.dirname(path.dirname(id.certPem)), 'signer-chain');
  await mkdir(work, { recursive: true });
  appleRoots = path.join(work, 'apple-roots.pem');
  appleIntermediates = path.join(work, 'apple-intermediates.pem');
  await writeFile(appleRoots, APPLE_ROOTS.map((c) => c.pem).join(''));
  await writeFile(appleIntermediates, APPLE_WWDR_INTERMEDIATES.map((c) => c.pem).join(''));
});

async function certificate(spec: CertificateSpec) {
  const dir = path.join(work, `cert-${++counter}`);
  await mkdir(dir);
  return makeCertificate(dir, spec);
}

/** openssl verify's verdict on a leaf at a time, against Apple's CAs unless a test CA is named. */
async function opensslVerifies(leafPem: string, at: Date, ca?: { root: string; intermediate: string }): Promise<boolean> {
  const args = ['verify', '-attime', String(Math.floor(at.getTime() / 1000)), '-CAfile', ca?.root ?? appleRoots, '-untrusted', ca?.intermediate ?? appleIntermediates, leafPem];
  return run('openssl', args).then(() => true, () => false);
}

/** An IPA signed by `signer`, and a copy of its executable for rcodesign verify. */
async function signedIpa(signer?: IosSigner): Promise<{ file: string; exe: string }> {
  let exe = '';
  const file = await buildIpa({
    infoPlist: INFO, binary: true, signer,
    tamper: async (app) => {
      exe = path.join(work, `exe-${++counter}`);
      await copyFile(path.join(app, 'Example'), exe);
    },
  });
  return { file, exe };
}

/** As the service analyses it: Apple's CAs, no test anchor. */
const scanAsService = (file: string) => analyzePackage(file, 'ios', { now: NOW });

async function sha256Of(certPem: string): Promise<string> {
  return (await run('sh', ['-c', `openssl x509 -in '${certPem}' -outform DER | openssl dgst -sha256 -r`])).stdout.split(' ')[0];
}

function untrusted(r: Awaited<ReturnType<typeof scanAsService>>): string {
  const f = only(r, 'ios.signer-untrusted');
  expect(f.severity).toBe('critical');
  return f.detail;
}

describe('a bundle signed under a CA that copies Apple\'s names', () => {
  it('is not verified and names no team under Apple\'s CAs, though its signature verifies; under its own CA as anchor it is', async () => {
    const id = await iosSigningIdentity();
    const { file, exe } = await signedIpa();
    expect(await rcodesignVerify(exe)).toBe(true);
    expect(await opensslVerifies(id.certPem, NOW)).toBe(false);
    const r = await scanAsService(file);
    const signing = r.signing as IosSigning;
    expect(signing).toMatchObject({ verified: false, teamId: null, keySha256: null });
    expect(signing.signers[0].sha256).toBe(await sha256Of(id.certPem));
    expect(untrusted(r)).toContain(`claims team ${IOS_TEAM_ID}`);
    expect(ids(r)).not.toContain('ios.seal-broken');
    // The same bundle with the test CA as the anchor (what openssl accepts too) is verified and names the team.
    expect(await opensslVerifies(id.certPem, NOW, { root: id.root.certPem, intermediate: id.intermediate.certPem })).toBe(true);
    const anchored = await scan(file, 'ios');
    expect(ids(anchored)).toEqual([]);
    expect(anchored.signing).toMatchObject({ verified: true, teamId: IOS_TEAM_ID });
  });

  it('gains nothing by carrying its fake intermediate and root in the signature', async () => {
    const id = await iosSigningIdentity();
    const { file } = await signedIpa({ keyPem: id.keyPem, certPem: id.certPem, chainPems: [id.intermediate.certPem, id.root.certPem] });
    const r = await scanAsService(file);
    const signing = r.signing as IosSigning;
    expect(signing.signers.map((s) => s.sha256)).toEqual([await sha256Of(id.certPem), await sha256Of(id.intermediate.certPem), await sha256Of(id.root.certPem)]);
    expect(signing).toMatchObject({ verified: false, teamId: null });
    expect(untrusted(r)).toContain('not issued by an Apple Worldwide Developer Relations CA');
  });
});

describe('a bundle signed with a self-signed certificate that copies a team\'s subject', () => {
  it('is refused under Apple\'s CAs and under the test CA alike', async () => {
    const id = await iosSigningIdentity();
    const subject = (await run('openssl', ['x509', '-in', id.certPem, '-noout', '-subject', '-nameopt', 'compat'])).stdout.trim().replace(/^subject=/, '');
    const self = await certificate({ subject, kind: 'leaf', extensions: 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=critical,codeSigning\n' });
    expect(await opensslVerifies(self.certPem, NOW)).toBe(false);
    expect(await opensslVerifies(self.certPem, NOW, { root: id.root.certPem, intermediate: id.intermediate.certPem })).toBe(false);
    const { file, exe } = await signedIpa({ keyPem: self.keyPem, certPem: self.certPem });
    expect(await rcodesignVerify(exe)).toBe(true);
    for (const r of [await scanAsService(file), await scan(file, 'ios')]) {
      expect(r.signing).toMatchObject({ verified: false, teamId: null });
      expect(untrusted(r)).toContain('self-signed');
    }
  });
});

describe('the time the chain is checked at', () => {
  it('refuses a signingTime before the certificate was valid, and accepts one inside it, as openssl verify does at that time', async () => {
    const id = await iosSigningIdentity();
    const leaf = await certificate({ subject: `/CN=Apple Distribution: Example Corp (${IOS_TEAM_ID})/OU=${IOS_TEAM_ID}/O=Example Corp/C=US`, kind: 'leaf', issuer: id.intermediate, startDate: '20250101000000Z' });
    const ca = { root: id.root.certPem, intermediate: id.intermediate.certPem };
    const early = new Date('2024-12-01T00:00:00Z');
    const inside = new Date('2025-02-01T00:00:00Z');
    expect(await opensslVerifies(leaf.certPem, early, ca)).toBe(false);
    expect(await opensslVerifies(leaf.certPem, inside, ca)).toBe(true);
    const refused = await scan((await signedIpa({ keyPem: leaf.keyPem, certPem: leaf.certPem, signingTime: early.toISOString() })).file, 'ios');
    expect(untrusted(refused)).toContain('not valid at its signing time, 2024-12-01T00:00:00Z');
    const accepted = await scan((await signedIpa({ keyPem: leaf.keyPem, certPem: leaf.certPem, signingTime: inside.toISOString() })).file, 'ios');
    expect(ids(accepted)).toEqual([]);
    expect(accepted.signing).toMatchObject({ verified: true, teamId: IOS_TEAM_ID });
  });

  it('refuses a certificate expired at the scan\'s time though it was valid at its signingTime', async () => {
    const id = await iosSigningIdentity();
    const leaf = await certificate({ subject: `/CN=Apple Distribution: Example Corp (${IOS_TEAM_ID})/OU=${IOS_TEAM_ID}/O=Example Corp/C=US`, kind: 'leaf', issuer: id.intermediate, endDate: '20250101000000Z' });
    const ca = { root: id.root.certPem, intermediate: id.intermediate.certPem };
    const signedAt = new Date('2024-06-01T00:00:00Z');
    expect(await opensslVerifies(leaf.certPem, signedAt, ca)).toBe(true);
    expect(await opensslVerifies(leaf.certPem, NOW, ca)).toBe(false);
    const r = await scan((await signedIpa({ keyPem: leaf.keyPem, certPem: leaf.certPem, signingTime: signedAt.toISOString() })).file, 'ios');
    expect(untrusted(r)).toContain('not valid at the scan\'s time');
    expect(r.signing).toMatchObject({ verified: false, teamId: null });
  });

  it('is the signingTime rcodesign wrote, as openssl cms prints it', async () => {
    const id = await iosSigningIdentity();
    const { exe } = await signedIpa({ keyPem: id.keyPem, certPem: id.certPem, signingTime: '2025-03-04T05:06:07Z' });
    const cms = path.join(work, `cms-${++counter}.der`);
    const extracted = await run(RCODESIGN, ['extract', 'cms-raw', exe], { encoding: 'buffer', maxBuffer: 1 << 20 });
    await writeFile(cms, extracted.stdout);
    const printed = (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cms])).stdout;
    expect(printed).toMatch(/signingTime[\s\S]*?UTCTIME:Mar\s+4 05:06:07 2025 GMT/);
  });
});
