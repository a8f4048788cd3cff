// Protects: signing rules read from v1 PKCS#7 and the v2/v3 APK Signing Block: debug certificate, expiry
// (with an injected clock), weak algorithm and key, unsigned packages, v1-only (Janus) and missing v1; a v1 block in
// BER with indefinite lengths (openssl cms -sign -stream) is read like apksigner's DER one.
import { X509Certificate } from 'node:crypto';
import { pkcs7Certificates } from '../../../src/scan/static/signing/pkcs7';
import { buildApk, cleanupFixtures, resignV1WithCmsStream } from '../../fixtures/build-packages';
import { apksignerVerdict } from '../../support/apksigner-verdict';
import { ids, manifest, only, scan } from './helpers';

jest.setTimeout(180_000);
afterAll(cleanupFixtures);

const SIGNING_IDS = /^android\.(debug-certificate|certificate-expired|weak-|unsigned|v1-only|missing-v1)/;
const signingIds = (r: Awaited<ReturnType<typeof scan>>) => ids(r).filter((id) => SIGNING_IDS.test(id));

describe('APK signing', () => {
  it('accepts a release key (RSA 3072, SHA-256) with v1+v2 signatures', async () => {
    expect(signingIds(await scan(await buildApk({ manifest: manifest({ minSdk: 21 }), sign: 'release' })))).toEqual([]);
  });

  it('reads certificates from a v2+v3 block without v1', async () => {
    const apk = await buildApk({ manifest: manifest(), sign: 'debug', schemes: { v1: false, v2: true, v3: true } });
    const f = only(await scan(apk), 'android.debug-certificate');
    expect(f.detail).toContain('CN=Android Debug');
    expect(f.detail).toContain('v2+v3 signature');
  });

  it('verifies a BER (indefinite-length) v1 block from openssl cms -sign -stream as apksigner does, with no false corrupt finding', async () => {
    // targetSdk 29: a v1-only APK targeting 30+ fails apksigner's minimum-scheme rule, whatever its block.
    const apk = await buildApk({ manifest: manifest({ targetSdk: 29 }), sign: 'debug', schemes: { v1: true, v2: false, v3: false } });
    const { block } = await resignV1WithCmsStream(apk, 'debug');
    expect(block[1]).toBe(0x80); // the ContentInfo itself has an indefinite length
    const certs = pkcs7Certificates(block);
    expect(certs.map((c) => new X509Certificate(c).subject.replace(/\n/g, ', '))).toEqual(['C=US, O=Android, CN=Android Debug']);
    const r = await scan(apk);
    expect((await apksignerVerdict(apk)).verified).toBe(true);
    expect(r.signing).toMatchObject({ verified: true, schemes: ['v1'] });
    expect(ids(r)).not.toContain('android.signature-invalid');
    expect(ids(r)).not.toContain('android.signature-corrupt');
    expect(ids(r)).not.toContain('android.certificate-unreadable');
    expect(only(r, 'android.debug-certificate').detail).toContain('v1 signature');
  });

  it('flags the Android debug certificate found in v1 and v2 once', async () => {
    const f = only(await scan(await buildApk({ manifest: manifest({ minSdk: 21 }), sign: 'debug' })), 'android.debug-certificate');
    expect(f.detail).toContain('v1+v2');
  });

  it('flags an expired certificate, judged by the injected clock', async () => {
    const apk = await buildApk({ manifest: manifest(), sign: 'expired' });
    expect(only(await scan(apk), 'android.certificate-expired').detail).toContain('expired on 2015-01-31');
    expect(signingIds(await scan(apk, 'android', new Date('2015-01-10T00:00:00Z')))).toEqual([]);
  });

  it('flags SHA1withRSA and a 1024-bit key', async () => {
    const r = await scan(await buildApk({ manifest: manifest(), sign: 'weak' }));
    expect(only(r, 'android.weak-signature-algorithm').detail).toContain('sha1WithRSAEncryption');
    expect(only(r, 'android.weak-signing-key')).toMatchObject({ severity: 'high' });
    expect(only(r, 'android.weak-signing-key').detail).toContain('1024-bit RSA');
  });

  it('flags an unsigned APK', async () => {
    expect(signingIds(await scan(await buildApk({ manifest: manifest(), sign: 'none' })))).toEqual(['android.unsigned']);
  });

  it('flags a v1-only APK that installs below API 24 (Janus) or targets 30+', async () => {
    const janus = only(await scan(await buildApk({ manifest: manifest({ minSdk: 21, targetSdk: 29 }), sign: 'v1-only' })), 'android.v1-only-signature');
    expect(janus.detail).toContain('CVE-2017-13156');
    const modern = only(await scan(await buildApk({ manifest: manifest({ minSdk: 26, targetSdk: 35 }), sign: 'v1-only' })), 'android.v1-only-signature');
    expect(modern.detail).toContain('Android 11');
  });

  it('flags a v2-only APK whose minSdk needs v1', async () => {
    const r = await scan(await buildApk({ manifest: manifest({ minSdk: 21 }), sign: 'release', schemes: { v1: false, v2: true, v3: false } }));
    expect(only(r, 'android.missing-v1-signature').detail).toContain('API 21-23');
  });
});
