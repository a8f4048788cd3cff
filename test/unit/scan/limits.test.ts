// Protects: every parser of the static analyser is bounded. Small hostile inputs built here reach each cap of
// limits.ts and end with that limit (a LimitExceededError naming it, or a scan.incomplete finding naming it), or with
// a plain syntax error, never a hang or a heap blow-up: shared binary-plist references and offsets are read once and
// what overlapping objects decode is capped, `<?` runs and DOCTYPEs cost one pass, a long <real> is refused without
// backtracking, string pool entries are decoded once, zip records keep none of their bytes, and findings quote at
// most 1 KB.
import { LimitExceededError } from '../../../src/scan/static/package/errors';
import { LIMITS, type LimitName } from '../../../src/scan/static/package/limits';
import { parseBinaryXml } from '../../../src/scan/static/android/binary-xml';
import { parseProtoXml } from '../../../src/scan/static/android/proto-xml';
import { StringPool } from '../../../src/scan/static/android/string-pool';
import { parseBinaryPlist } from '../../../src/scan/static/ios/binary-plist';
import { PlistSyntaxError, parseXmlPlist } from '../../../src/scan/static/ios/xml-plist';
import { readTlv } from '../../../src/scan/static/signing/der';
import { pkcs7Certificates } from '../../../src/scan/static/signing/pkcs7';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { buildApk, buildIpa, cleanupFixtures, writeRawFile } from '../../fixtures/build-packages';
import { binaryPlist, binaryXml, bplistArea, bplistCollection, bplistMarker, sharedReferencePlist, storedZip, storedZipWithCentralExtras, stringPoolChunk, utf16Strings, zip64Declaring } from './craft';
import { ids, manifest, only, scan } from './helpers';
import { execFileSync } from 'node:child_process';
import { runSync } from '../../support/host-tools';

afterAll(cleanupFixtures);

/** The error of class `type` that `fn` throws (any other error, or none, fails the test). */
function thrown<E extends Error>(fn: () => unknown, type: new (...args: never[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`no ${type.name} was thrown`);
}

/** The message of the PlistSyntaxError `fn` throws. */
const syntaxError = (fn: () => unknown): string => thrown(fn, PlistSyntaxError).message;
const limitOf = (fn: () => unknown): LimitName => thrown(fn, LimitExceededError).limit;

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

  // The report's plist: a top array of 50 references whose offset-table entries all point at one object of 4 MB.
  // Read once per reference, that was 50 copies (205 MB of ArrayBuffers or external strings, which the worker's
  // heap limit does not count); read once per offset, it is one value, and a data object is a view of the input.
  const fiftyReferences = (leaf: Buffer) => {
    const refs = Array.from({ length: 50 }, (_, i) => i + 1);
    const top = bplistCollection(0xa, refs);
    return binaryPlist(Buffer.concat([top, leaf]), [0, ...refs.map(() => top.length)]);
  };
  const FOUR_MB = 4 * 1024 * 1024;

  it.each([
    ['a data object', Buffer.concat([bplistMarker(0x4, FOUR_MB), Buffer.alloc(FOUR_MB, 0x41)])],
    ['an ASCII string', Buffer.concat([bplistMarker(0x5, FOUR_MB), Buffer.alloc(FOUR_MB, 0x41)])],
  ])('decodes %s once however many table entries point at its offset', (_kind, leaf) => {
    const plist = fiftyReferences(leaf);
    // Decoded once per reference, 50 x 4 MB would pass the decoded-bytes budget (the plist's own length) and throw.
    const items = parseBinaryPlist(plist) as unknown[];
    expect(items).toHaveLength(50);
    expect(items.every((item) => item === items[0])).toBe(true);
    expect((items[0] as { length: number }).length).toBe(FOUR_MB);
    if (Buffer.isBuffer(items[0])) expect(items[0].buffer).toBe(plist.buffer);
  });

  it('stops objects whose offsets overlap at the decoded-bytes cap', () => {
    // 20 data objects, each starting inside the previous one's bytes and running to the end of 1 MB of padding:
    // 20 distinct offsets, so 20 different values of about 1 MB each from a 1 MB file.
    const n = 20;
    const padding = 1024 * 1024;
    const headersEnd = 6 * n;
    const headers = Array.from({ length: n }, (_, i) => bplistMarker(0x4, headersEnd + padding - 6 * i - 6));
    const top = bplistCollection(0xa, Array.from({ length: n }, (_, i) => i + 1));
    const plist = binaryPlist(Buffer.concat([...headers, Buffer.alloc(padding), top]), [headersEnd + padding, ...headers.map((_, i) => 6 * i)]);
    expect(limitOf(() => parseBinaryPlist(plist))).toBe('plistDecodedBytes');
  });

  it('reads a plist that shares strings between entries and offsets as before', () => {
    const ascii = (s: string) => Buffer.concat([bplistMarker(0x5, s.length), Buffer.from(s, 'latin1')]);
    const utf16 = (s: string) => Buffer.concat([bplistMarker(0x6, s.length), Buffer.from(s, 'utf16le').swap16()]);
    const { area, starts } = bplistArea([
      bplistCollection(0xd, [1, 2, 3, 4, 5, 6, 6, 7, 8, 9]), // 0: {a: 6, b: 6, c: 7, d: 8, e: 9}
      ascii('a'), ascii('b'), ascii('c'), ascii('d'), ascii('e'), // 1-5: keys
      ascii('shared'), // 6
      bplistCollection(0xa, [6, 10, 11, 1]), // 7: [6, 10 (object 6's offset again), 11, the key "a"]
      Buffer.concat([bplistMarker(0x4, 2), Buffer.from('hi')]), // 8
      Buffer.from([0x10, 42]), // 9
      utf16('h\u00e9llo \u2713 \u{1f600}'), // 10 in the table is object 6; this one is 11
    ]);
    const plist = binaryPlist(area, [...starts.slice(0, 10), starts[6], starts[10]]);
    const root = parseBinaryPlist(plist) as Record<string, unknown>;
    expect(root).toEqual({ a: 'shared', b: 'shared', c: ['shared', 'shared', 'h\u00e9llo \u2713 \u{1f600}', 'a'], d: Buffer.from('hi'), e: 42 });
    expect(Buffer.isBuffer(root.d)).toBe(true);
  });
});

describe('XML plist', () => {
  it('rejects 4 MB of `<?` in one pass', () => {
    expect(() => parseXmlPlist('<?'.repeat(2 * 1024 * 1024))).toThrow(PlistSyntaxError);
    expect(() => parseXmlPlist(`<plist>${'<!--'.repeat(1024 * 1024)}`)).toThrow(PlistSyntaxError);
  });

  it('refuses 4 MB of DOCTYPE declarations at the second one, and a DOCTYPE inside the document', () => {
    // Each DOCTYPE looked for its internal subset's `[` as far as the end of the document: 8 MB of them took 22 s.
    expect(syntaxError(() => parseXmlPlist('<!DOCTYPE>'.repeat(400_000)))).toMatch(/second DOCTYPE/);
    expect(syntaxError(() => parseXmlPlist(`<!DOCTYPE plist>${'<!DOCTYPE plist>'.repeat(250_000)}<plist><true/></plist>`))).toMatch(/second DOCTYPE/);
    expect(syntaxError(() => parseXmlPlist('<plist><!DOCTYPE plist><true/></plist>'))).toMatch(/DOCTYPE after the root element/);
    // One DOCTYPE is skipped, an internal subset with it (`>` inside it included), whatever `[` comes later.
    expect(parseXmlPlist(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "x.dtd"><plist><string>[${'a'.repeat(1 << 20)}</string></plist>`)).toHaveLength((1 << 20) + 1);
    expect(parseXmlPlist('<?xml version="1.0"?><!DOCTYPE plist [ <!ENTITY x "y"> ]><plist><true/></plist>')).toBe(true);
  });

  it('refuses a <real> or <integer> of 200,000 digits as not a number, however it ends', () => {
    // /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/ tried every split of a digit run before failing: 40,000 took 1.7 s.
    const digits = '1'.repeat(200_000);
    for (const element of ['real', 'integer']) {
      for (const text of [`${digits}x`, digits, `${digits}.5`, `-${digits}e5`]) {
        expect(syntaxError(() => parseXmlPlist(`<plist><${element}>${text}</${element}></plist>`))).toMatch(/not a number/);
      }
    }
    // Real numbers as writers print them still parse.
    expect(parseXmlPlist('<plist><array><real>-1.2345678901234567e-308</real><real>.5</real><real>3.</real><real>+2E+10</real><integer>-9223372036854775808</integer><integer>0x1F</integer></array></plist>'))
      .toEqual([-1.2345678901234567e-308, 0.5, 3, 2e10, -9223372036854775808, 31]);
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

describe('zip central directory', () => {
  it('keeps of each entry its name and a few numbers, never the buffer its central-directory record was read into', async () => {
    // yauzl reads each record into a buffer of its own (up to 196 KB with the name, extra field and comment), and
    // its Entry holds views of that buffer: 1,500 kept res/xml entries with 64 KB extra fields held 98 MB outside
    // the V8 heap for the life of the zip.
    const names = Array.from({ length: 300 }, (_, i) => `res/xml/padded_${i}.xml`);
    const file = await writeRawFile('padded.apk', storedZipWithCentralExtras(names.map((n, i) => [n, Buffer.from(`<entry ${i}/>`)]), 65_535, 4_096));
    const zip = await PackageZip.open(file, (name) => name.startsWith('res/'));
    try {
      expect(zip.names()).toEqual(names);
      // Only strings and numbers: nothing that could hold a view of a record's buffer (300 x 70 KB here).
      for (const name of names) {
        const record = zip.entry(name) as unknown as Record<string, unknown>;
        for (const raw of ['fileNameRaw', 'extraFieldRaw', 'fileCommentRaw', 'extraFields', 'fileComment', 'comment']) expect(record).not.toHaveProperty(raw);
        for (const value of Object.values(record)) expect(['string', 'number']).toContain(typeof value);
      }
      expect((await zip.read(names[7], 'resourceXml')).toString()).toBe('<entry 7/>');
      expect((await zip.read(names[299], 'resourceXml')).toString()).toBe('<entry 299/>');
    } finally {
      zip.close();
    }
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
    runSync('zip', ['-q', apk, ...extra], { cwd: dir });
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
