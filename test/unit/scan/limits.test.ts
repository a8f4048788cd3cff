// Protects: every parser of the static analyser is bounded. Small hostile inputs built here reach each cap of
// limits.ts and end with that limit (a LimitExceededError naming it, or a scan.incomplete finding naming it), or with
// a plain syntax error, never a hang or a heap blow-up: shared binary-plist references are read once, `<?` runs
// cost one pass, string pool entries are decoded once, and findings quote at most 1 KB.
import { LimitExceededError } from '../../../src/scan/static/errors';
import { LIMITS, type LimitName } from '../../../src/scan/static/limits';
import { parseBinaryXml } from '../../../src/scan/static/android/binary-xml';
import { parseProtoXml } from '../../../src/scan/static/android/proto-xml';
import { StringPool } from '../../../src/scan/static/android/string-pool';
import { parseBinaryPlist } from '../../../src/scan/static/ios/binary-plist';
import { PlistSyntaxError, parseXmlPlist } from '../../../src/scan/static/ios/xml-plist';
import { readTlv } from '../../../src/scan/static/signing/der';
import { pkcs7Certificates } from '../../../src/scan/static/signing/pkcs7';
import { buildApk, buildIpa, cleanupFixtures, writeRawFile } from '../../fixtures/build-packages';
import { binaryXml, sharedReferencePlist, storedZip, stringPoolChunk, utf16Strings, zip64Declaring } from './craft';
import { ids, manifest, only, scan } from './helpers';
import { execFileSync } from 'node:child_process';

afterAll(cleanupFixtures);

function limitOf(fn: () => unknown): LimitName {
  try {
    fn();
  } catch (err) {
    if (err instanceof LimitExceededError) return err.limit;
    throw err;
  }
  throw new Error('no limit was reached');
}

describe('binary plist', () => {
  it('reads each shared object once: 26 arrays each referencing the next twice stop at the value cap', () => {
    const bomb = sharedReferencePlist(26);
    expect(bomb.length).toBeLessThan(200);
    expect(limitOf(() => parseBinaryPlist(bomb))).toBe('plistValues');
  });

  it('keeps small shared structures, the shared object being one value', () => {
    const root = parseBinaryPlist(sharedReferencePlist(4)) as { a: unknown[] };
    expect(root.a).toHaveLength(2);
    expect(root.a[0]).toBe(root.a[1]);
  });

  it('refuses a reference cycle', () => {
    // Object 0: an array holding itself.
    const objects = Buffer.from([0xa1, 0]);
    const trailer = Buffer.alloc(32);
    trailer[6] = 1;
    trailer[7] = 1;
    trailer.writeBigUInt64BE(1n, 8);
    trailer.writeBigUInt64BE(10n, 24);
    expect(() => parseBinaryPlist(Buffer.concat([Buffer.from('bplist00'), objects, Buffer.from([8]), trailer]))).toThrow(PlistSyntaxError);
  });
});

describe('XML plist', () => {
  it('rejects 4 MB of `<?` in one pass', () => {
    expect(() => parseXmlPlist('<?'.repeat(2 * 1024 * 1024))).toThrow(PlistSyntaxError);
    expect(() => parseXmlPlist(`<plist>${'<!--'.repeat(1024 * 1024)}`)).toThrow(PlistSyntaxError);
  });

  it('stops deep nesting and too many values at their caps', () => {
    const deep = `<plist>${'<array>'.repeat(LIMITS.xmlDepth + 2)}${'</array>'.repeat(LIMITS.xmlDepth + 2)}</plist>`;
    expect(limitOf(() => parseXmlPlist(deep))).toBe('xmlDepth');
    const wide = `<plist><array>${'<true/>'.repeat(LIMITS.plistValues + 1)}</array></plist>`;
    expect(limitOf(() => parseXmlPlist(wide))).toBe('plistValues');
  });
});

describe('compiled Android XML', () => {
  it('stops deep nesting, too many elements and too many attributes at their caps', () => {
    expect(limitOf(() => parseBinaryXml(binaryXml({ nested: LIMITS.xmlDepth + 1 })))).toBe('xmlDepth');
    expect(limitOf(() => parseBinaryXml(binaryXml({ elements: LIMITS.xmlElements })))).toBe('xmlElements');
    expect(limitOf(() => parseBinaryXml(binaryXml({ elements: 20_000, attributes: LIMITS.xmlAttributes / 20_000 + 1 })))).toBe('xmlAttributes');
    expect(parseBinaryXml(binaryXml({ elements: 3, attributes: 2 })).children).toHaveLength(3);
  });

  it('decodes a string once however many indices name it', () => {
    // 5,000 indices of one 60 KB string: decoded per index, that would be 300 MB (and past the decoded-bytes cap).
    const big = utf16Strings(['x'.repeat(30_000)]);
    const pool = new StringPool(stringPoolChunk(Array(5_000).fill(big.offsets[0]), big.data), 0, Infinity);
    const first = pool.get(0);
    let same = 0;
    for (let i = 0; i < 5_000; i++) if (pool.get(i) === first) same++;
    expect({ length: first?.length, same }).toEqual({ length: 30_000, same: 5_000 });
  });

  it('stops overlapping string pool entries at the decoded-bytes cap', () => {
    // Every two bytes read as a length of 0x7ff0 characters: each offset is a different 64 KB string.
    const data = Buffer.alloc(70_000, Buffer.from([0xf0, 0x7f]));
    const offsets = Array.from({ length: 2_000 }, (_, i) => i * 2);
    const pool = new StringPool(stringPoolChunk(offsets, data), 0, Infinity);
    expect(limitOf(() => offsets.forEach((_, i) => pool.get(i)))).toBe('stringPoolBytes');
  });

  it('stops deep protobuf XML nesting at the depth cap', () => {
    // XmlNode{element: XmlElement{child: XmlNode{element: ...}}}, field 1 = element, field 5 = child.
    let element = Buffer.alloc(0);
    for (let i = 0; i < LIMITS.xmlDepth + 2; i++) {
      const node = Buffer.concat([Buffer.from([0x0a]), varint(element.length), element]);
      element = Buffer.concat([Buffer.from([0x2a]), varint(node.length), node]);
    }
    const root = Buffer.concat([Buffer.from([0x0a]), varint(element.length), element]);
    expect(limitOf(() => parseProtoXml(root))).toBe('xmlDepth');
  });
});

describe('PKCS#7', () => {
  it('stops nested indefinite lengths at the depth cap and too many certificates at their cap', () => {
    const depth = LIMITS.derDepth + 2;
    const nested = Buffer.concat([Buffer.alloc(depth * 2, Buffer.from([0x30, 0x80])), Buffer.alloc(depth * 2)]);
    expect(limitOf(() => readTlv(nested, 0))).toBe('derDepth');
    // SignedData { version, digestAlgorithms, contentInfo, [0] { 17 empty SEQUENCEs } } inside a ContentInfo.
    const der = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag, 0x82, body.length >> 8, body.length & 0xff]), body]);
    const certs = der(0xa0, Buffer.alloc((LIMITS.certificatesPerFile + 1) * 2, Buffer.from([0x30, 0x00])));
    const signedData = der(0x30, Buffer.concat([Buffer.from([0x02, 0x01, 0x01, 0x31, 0x00, 0x30, 0x00]), certs]));
    const contentInfo = der(0x30, Buffer.concat([Buffer.from('06092a864886f70d010702', 'hex'), der(0xa0, signedData)]));
    expect(limitOf(() => pkcs7Certificates(contentInfo))).toBe('certificatesPerFile');
  });
});

describe('whole packages', () => {
  it('ends a zip declaring more entries than the cap with scan.incomplete naming it', async () => {
    const r = await scan(await writeRawFile('many.apk', zip64Declaring(LIMITS.zipEntries + 1)));
    expect(ids(r)).toEqual(['scan.incomplete']);
    expect(only(r, 'scan.incomplete').detail).toContain('limit "zipEntries"');
  });

  it('ends a manifest past the element cap with scan.incomplete naming it', async () => {
    const apk = await writeRawFile('wide.apk', storedZip([['AndroidManifest.xml', binaryXml({ elements: LIMITS.xmlElements })]]));
    expect(only(await scan(apk), 'scan.incomplete').detail).toContain('limit "xmlElements"');
  });

  it('ends a package with more v1 signature files than the cap with scan.incomplete naming it', async () => {
    const apk = await buildApk({ manifest: manifest(), sign: 'v1-only' });
    const dir = execFileSync('mktemp', ['-d']).toString().trim();
    const extra = Array.from({ length: LIMITS.signatureFiles }, (_, i) => `META-INF/EXTRA${i}.RSA`);
    execFileSync('mkdir', ['-p', `${dir}/META-INF`]);
    for (const name of extra) execFileSync('cp', ['/dev/null', `${dir}/${name}`]);
    execFileSync('zip', ['-q', apk, ...extra], { cwd: dir });
    expect(only(await scan(apk), 'scan.incomplete').detail).toContain('limit "signatureFiles"');
  });

  it('quotes at most 1 KB of package text in a finding and keeps at most the findings cap', async () => {
    const domains = Object.fromEntries(Array.from({ length: LIMITS.findings + 20 }, (_, i) => [`${'a'.repeat(i === 0 ? 5_000 : 10)}${i}.example`, { NSExceptionAllowsInsecureHTTPLoads: true }]));
    const ipa = await buildIpa({ infoPlist: { CFBundleIdentifier: 'com.example.app', NSAppTransportSecurity: { NSExceptionDomains: domains } }, binary: false });
    const r = await scan(ipa, 'ios');
    expect(r.findings).toHaveLength(LIMITS.findings);
    for (const f of r.findings) {
      expect(f.detail.length).toBeLessThanOrEqual(LIMITS.findingDetail);
      expect(f.title.length).toBeLessThanOrEqual(LIMITS.findingTitle);
    }
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.from(out);
}
