// Protects: the hand-written parsers (XML plist, DER, protobuf varints, binary AXML) accept what the real
// tools emit and fail only with their own error types on damaged input (seeded mutation of a real manifest).
import { parseBinaryXml } from '../../../src/scan/static/android/binary-xml';
import { readFields } from '../../../src/scan/static/android/protobuf';
import { parseProtoXml } from '../../../src/scan/static/android/proto-xml';
import { UnreadablePackageError } from '../../../src/scan/static/package/errors';
import { PlistSyntaxError, parseXmlPlist } from '../../../src/scan/static/ios/xml-plist';
import { DerError, readOid, readTlv } from '../../../src/scan/static/signing/der';
import { pkcs7Certificates } from '../../../src/scan/static/signing/pkcs7';
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { manifest } from './helpers';
import { runSync } from '../../support/host-tools';

jest.setTimeout(60_000);
afterAll(cleanupFixtures);

describe('parseXmlPlist', () => {
  it('reads every value type, entities, CDATA and the DOCTYPE', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- comment -->
<plist version="1.0"><dict>
  <key>s</key><string>a &amp; b &lt;c&gt; &#x41;</string>
  <key>c</key><string><![CDATA[<raw>]]></string>
  <key>i</key><integer>-42</integer><key>r</key><real>1.5</real>
  <key>t</key><true/><key>f</key><false/>
  <key>d</key><date>2030-01-02T03:04:05Z</date>
  <key>b</key><data>aGk=</data>
  <key>a</key><array><string>x</string><dict/></array>
  <key>e</key><string/>
</dict></plist>`;
    const v = parseXmlPlist(xml) as Record<string, unknown>;
    expect({ ...v, a: undefined, d: undefined, b: undefined }).toEqual({ s: 'a & b <c> A', c: '<raw>', i: -42, r: 1.5, t: true, f: false, e: '', a: undefined, d: undefined, b: undefined });
    expect((v.d as Date).toISOString()).toBe('2030-01-02T03:04:05.000Z');
    expect((v.b as Buffer).toString()).toBe('hi');
    expect(v.a).toEqual(['x', {}]);
  });

  it.each([
    '<plist><dict><key>a</key></dict></plist>',
    '<plist><dict><string>no key</string></dict></plist>',
    '<plist><integer>12x</integer></plist>',
    '<plist><dict><key>a</key><string>&xxe;</string></dict></plist>',
    '<plist><dict>',
    'not xml',
  ])('rejects %s', (xml) => {
    expect(() => parseXmlPlist(xml)).toThrow(PlistSyntaxError);
  });
});

describe('DER', () => {
  it('decodes OIDs and long lengths', () => {
    const sha256WithRsa = Buffer.from('06092a864886f70d01010b', 'hex');
    expect(readOid(sha256WithRsa, readTlv(sha256WithRsa, 0))).toBe('1.2.840.113549.1.1.11');
    const long = Buffer.concat([Buffer.from([0x04, 0x82, 0x01, 0x00]), Buffer.alloc(256)]);
    expect(readTlv(long, 0)).toMatchObject({ body: 4, end: 260 });
  });

  it('rejects truncation, malformed indefinite lengths and non-SignedData', () => {
    expect(() => readTlv(Buffer.from([0x30, 0x05, 0x01]), 0)).toThrow(DerError);
    // BER indefinite length: fine on a constructed value ending in 00 00, refused on a primitive or without the end.
    expect(readTlv(Buffer.from([0x30, 0x80, 0x02, 0x01, 0x07, 0x00, 0x00]), 0)).toEqual({ tag: 0x30, start: 0, body: 2, bodyEnd: 5, end: 7 });
    expect(() => readTlv(Buffer.from([0x04, 0x80, 0x00, 0x00]), 0)).toThrow(DerError);
    expect(() => readTlv(Buffer.from([0x30, 0x80, 0x02, 0x01, 0x07]), 0)).toThrow(DerError);
    expect(() => pkcs7Certificates(Buffer.from('300b06092a864886f70d010701', 'hex'))).toThrow(DerError);
  });
});

describe('protobuf', () => {
  it('keeps the exact low 32 bits of a negative int32 varint', () => {
    // field 6, varint, value -2 as a 10-byte two's complement varint
    const [f] = readFields(Buffer.from('30feffffffffffffffff01', 'hex'));
    expect(f.field).toBe(6);
    expect(f.low32 | 0).toBe(-2);
  });

  it('rejects truncated messages', () => {
    expect(() => [...readFields(Buffer.from('1a05ab', 'hex'))]).toThrow(UnreadablePackageError);
    expect(() => parseProtoXml(Buffer.from('0a', 'hex'))).toThrow(UnreadablePackageError);
  });
});

describe('binary AXML under mutation', () => {
  it('fails only with UnreadablePackageError on 2000 seeded corruptions of a real manifest', async () => {
    const apk = await buildApk({ manifest: manifest({ body: '<service android:name=".S" android:exported="true"/>' }), sign: 'none' });
    const real = runSync('unzip', ['-p', apk, 'AndroidManifest.xml']);
    expect(parseBinaryXml(real).name).toBe('manifest');
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    let parsed = 0;
    for (let i = 0; i < 2000; i++) {
      const copy = Buffer.from(real);
      for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) copy[Math.floor(rand() * copy.length)] = Math.floor(rand() * 256);
      try {
        parseBinaryXml(copy);
        parsed++;
      } catch (err) {
        expect(err).toBeInstanceOf(UnreadablePackageError);
      }
    }
    expect(parsed).toBeGreaterThan(0);
  });
});
