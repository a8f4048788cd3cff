// Seeded, structure-aware mutants of a signed APK for the differential against apksig (apk-differential.ts). The
// generator locates the regions a verifier reads (local headers, entry data, data descriptors, the APK Signing Block
// and the v2/v3/v3.1 signer records inside it, the central directory, the end record and what may sit before it, the
// JAR files under META-INF/, the manifest's minSdkVersion) and makes one targeted change per mutant: a field set to a
// boundary value, a byte flipped, the file cut inside the region, bytes inserted, or an entry added or edited. A
// mutant is a pure function of (base bytes, seed, index): no Math.random, no clock.
import { readEntry, rebuildZip } from '../fixtures/signing-corpus';
import { mulberry32, type Rng } from '../support/prng';

/** The classes the summary counts by; each mutant changes one region of one class. */
export const REGION_CLASSES = [
  'lfh', 'entry-data', 'data-descriptor', 'signing-block', 'v2', 'v3', 'v3.1', 'central-directory', 'eocd', 'eocd-gap', 'entries', 'meta-inf', 'manifest-minsdk',
] as const;
export type RegionClass = (typeof REGION_CLASSES)[number];

/** A span of the file: a little-endian integer field (width 2, 4 or 8) or raw bytes (width 0). */
type Field = { cls: RegionClass; name: string; at: number; width: 0 | 2 | 4 | 8; length: number };
/** A change that rewrites the archive instead of bytes in place. */
type Edit = { cls: RegionClass; name: string; kinds: string[]; apply: (apk: Buffer, kind: string, rng: Rng) => Buffer | null };

export type Mutant = { base: string; seed: number; index: number; cls: RegionClass; region: string; kind: string; bytes: Buffer };

/** The stream of one mutant: (seed, index) mixed so neighbouring indexes do not share a prefix. */
export function mutantRng(seed: number, index: number): Rng {
  return mulberry32(Math.imul(seed ^ 0x5bd1e995, 0x01000193) ^ Math.imul(index + 1, 0x9e3779b9));
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];

const EOCD_SIG = 0x06054b50;
const CD_SIG = 0x02014b50;
const MAGIC = 'APK Sig Block 42';
const SCHEME_IDS: Record<number, 'v2' | 'v3' | 'v3.1'> = { 0x7109871a: 'v2', 0xf05368c0: 'v3', 0x1b93ad61: 'v3.1' };
const MIN_SDK_ATTR = 0x0101020c;
/** Values on the edges of every check a verifier makes on a field. */
const BOUNDARY = [0, 1, 2, 0x7f, 0x80, 0xff, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
/** minSdkVersion values on each side of the platform versions where the verdict's rules change. */
const MIN_SDKS = [0, 1, 17, 18, 20, 21, 23, 24, 25, 27, 28, 29, 30, 32, 33, 34, 10_000, 0x7fffffff, 0xffffffff];
const FIELD_KINDS = ['zero', 'one', 'max', 'plus-one', 'minus-one', 'boundary', 'flip-bit'];
const BYTES_KINDS = ['flip-byte', 'zero-fill', 'truncate-inside', 'insert', 'insert-shifted'];

/** The central directory record layout (APPNOTE 4.3.12): field name, offset, width. */
const CD_FIELDS: [string, number, 2 | 4][] = [
  ['signature', 0, 4], ['version-made', 4, 2], ['version-needed', 6, 2], ['flags', 8, 2], ['method', 10, 2], ['time', 12, 2], ['date', 14, 2],
  ['crc', 16, 4], ['compressed-size', 20, 4], ['size', 24, 4], ['name-length', 28, 2], ['extra-length', 30, 2], ['comment-length', 32, 2],
  ['disk-start', 34, 2], ['internal-attributes', 36, 2], ['external-attributes', 38, 4], ['local-offset', 42, 4],
];
const LFH_FIELDS: [string, number, 2 | 4][] = [
  ['signature', 0, 4], ['version', 4, 2], ['flags', 6, 2], ['method', 8, 2], ['time', 10, 2], ['date', 12, 2], ['crc', 14, 4],
  ['compressed-size', 18, 4], ['size', 22, 4], ['name-length', 26, 2], ['extra-length', 28, 2],
];
const EOCD_FIELDS: [string, number, 2 | 4][] = [
  ['signature', 0, 4], ['disk', 4, 2], ['cd-disk', 6, 2], ['entries-on-disk', 8, 2], ['entries', 10, 2], ['cd-size', 12, 4], ['cd-offset', 16, 4], ['comment-length', 20, 2],
];

type Layout = { eocd: number; cdOffset: number; cdSize: number; count: number; records: { at: number; name: string; lfh: number; dataStart: number; dataEnd: number; flags: number }[]; block: number | null };

/** The archive as the corpus' apksigner wrote it (one end record, no ZIP64); throws on anything else. */
function layout(apk: Buffer): Layout {
  let eocd = -1;
  for (let at = apk.length - 22; at >= Math.max(0, apk.length - 22 - 0xffff); at--) {
    if (apk.readUInt32LE(at) === EOCD_SIG && at + 22 + apk.readUInt16LE(at + 20) === apk.length) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new Error('base APK without an end record');
  const count = apk.readUInt16LE(eocd + 10);
  const cdOffset = apk.readUInt32LE(eocd + 16);
  const records: Layout['records'] = [];
  for (let at = cdOffset, i = 0; i < count; i++) {
    if (apk.readUInt32LE(at) !== CD_SIG) throw new Error('base APK with a bad central directory');
    const nameLength = apk.readUInt16LE(at + 28);
    const lfh = apk.readUInt32LE(at + 42);
    const dataStart = lfh + 30 + apk.readUInt16LE(lfh + 26) + apk.readUInt16LE(lfh + 28);
    records.push({ at, name: apk.toString('utf8', at + 46, at + 46 + nameLength), lfh, dataStart, dataEnd: dataStart + apk.readUInt32LE(at + 20), flags: apk.readUInt16LE(at + 8) });
    at += 46 + nameLength + apk.readUInt16LE(at + 30) + apk.readUInt16LE(at + 32);
  }
  const block = cdOffset >= 32 && apk.toString('latin1', cdOffset - 16, cdOffset) === MAGIC ? cdOffset - Number(apk.readBigUInt64LE(cdOffset - 24)) - 8 : null;
  return { eocd, cdOffset, cdSize: apk.readUInt32LE(eocd + 12), count, records, block };
}

/** Every field and byte span of the base a mutant may change in place. */
function fields(apk: Buffer, z: Layout): Field[] {
  const out: Field[] = [];
  const int = (cls: RegionClass, name: string, at: number, width: 2 | 4 | 8) => out.push({ cls, name, at, width, length: width });
  const bytes = (cls: RegionClass, name: string, at: number, length: number) => length > 0 && out.push({ cls, name, at, width: 0, length });
  for (const r of z.records) {
    const entry = r.name.startsWith('META-INF/') ? 'meta-inf-entry' : r.name === 'AndroidManifest.xml' ? 'manifest-entry' : 'entry';
    for (const [name, off, w] of LFH_FIELDS) int('lfh', `lfh.${entry}.${name}`, r.lfh + off, w);
    bytes('lfh', `lfh.${entry}.name`, r.lfh + 30, apk.readUInt16LE(r.lfh + 26));
    bytes('lfh', `lfh.${entry}.extra`, r.lfh + 30 + apk.readUInt16LE(r.lfh + 26), apk.readUInt16LE(r.lfh + 28));
    bytes('entry-data', `data.${entry}`, r.dataStart, r.dataEnd - r.dataStart);
    for (const [name, off, w] of CD_FIELDS) int('central-directory', `cd.${entry}.${name}`, r.at + off, w);
    const nameLength = apk.readUInt16LE(r.at + 28);
    bytes('central-directory', `cd.${entry}.name`, r.at + 46, nameLength);
    bytes('central-directory', `cd.${entry}.extra`, r.at + 46 + nameLength, apk.readUInt16LE(r.at + 30));
    if (r.flags & 0x08) bytes('data-descriptor', `descriptor.${entry}`, r.dataEnd, apk.readUInt32LE(r.dataEnd) === 0x08074b50 ? 16 : 12);
  }
  for (const [name, off, w] of EOCD_FIELDS) int('eocd', `eocd.${name}`, z.eocd + off, w);
  bytes('eocd', 'eocd.comment', z.eocd + 22, apk.readUInt16LE(z.eocd + 20));
  if (z.block !== null) signingBlockFields(apk, z.block, z.cdOffset, out);
  return out;
}

/** The block's sizes, magic and pairs, and inside each v2/v3/v3.1 pair every length, id and value of its signers. */
function signingBlockFields(apk: Buffer, block: number, cdOffset: number, out: Field[]): void {
  out.push({ cls: 'signing-block', name: 'block.size-head', at: block, width: 8, length: 8 });
  out.push({ cls: 'signing-block', name: 'block.size-foot', at: cdOffset - 24, width: 8, length: 8 });
  out.push({ cls: 'signing-block', name: 'block.magic', at: cdOffset - 16, width: 0, length: 16 });
  for (let at = block + 8; at + 12 <= cdOffset - 24;) {
    const len = Number(apk.readBigUInt64LE(at));
    const id = apk.readUInt32LE(at + 8);
    const scheme = SCHEME_IDS[id];
    const pair = scheme ?? 'other-pair';
    out.push({ cls: 'signing-block', name: `block.${pair}.length`, at, width: 8, length: 8 });
    out.push({ cls: 'signing-block', name: `block.${pair}.id`, at: at + 8, width: 4, length: 4 });
    if (scheme) schemeFields(apk, scheme, at + 12, at + 8 + len, out);
    at += 8 + len;
  }
}

/** One scheme block (source.android.com "APK Signature Scheme v2/v3"): uint32-length-prefixed sequences. */
function schemeFields(apk: Buffer, cls: 'v2' | 'v3' | 'v3.1', start: number, end: number, out: Field[]): void {
  const int = (name: string, at: number) => out.push({ cls, name: `${cls}.${name}`, at, width: 4, length: 4 });
  const bytes = (name: string, at: number, length: number) => length > 0 && out.push({ cls, name: `${cls}.${name}`, at, width: 0, length });
  const v3 = cls !== 'v2';
  int('signers.length', start);
  for (const signer of items(apk, start, end)) {
    int('signer.length', signer.start - 4);
    const signed = prefixed(apk, signer.start);
    int('signed-data.length', signed.start - 4);
    const digests = prefixed(apk, signed.start);
    int('digests.length', digests.start - 4);
    for (const d of items(apk, digests.start - 4, digests.end)) {
      int('digest.length', d.start - 4);
      int('digest.algorithm', d.start);
      const value = prefixed(apk, d.start + 4);
      int('digest.value-length', value.start - 4);
      bytes('digest.value', value.start, value.end - value.start);
    }
    const certs = prefixed(apk, digests.end);
    int('certificates.length', certs.start - 4);
    for (const c of items(apk, certs.start - 4, certs.end)) {
      int('certificate.length', c.start - 4);
      bytes('certificate', c.start, c.end - c.start);
    }
    let next = certs.end;
    if (v3) {
      int('signed-min-sdk', next);
      int('signed-max-sdk', next + 4);
      next += 8;
    }
    const attrs = prefixed(apk, next);
    int('attributes.length', attrs.start - 4);
    for (const a of items(apk, attrs.start - 4, attrs.end)) {
      int('attribute.length', a.start - 4);
      int('attribute.id', a.start);
      bytes('attribute.value', a.start + 4, a.end - a.start - 4);
    }
    next = signed.end;
    if (v3) {
      int('min-sdk', next);
      int('max-sdk', next + 4);
      next += 8;
    }
    const sigs = prefixed(apk, next);
    int('signatures.length', sigs.start - 4);
    for (const s of items(apk, sigs.start - 4, sigs.end)) {
      int('signature.length', s.start - 4);
      int('signature.algorithm', s.start);
      const value = prefixed(apk, s.start + 4);
      bytes('signature.value', value.start, value.end - value.start);
    }
    const key = prefixed(apk, sigs.end);
    int('public-key.length', key.start - 4);
    bytes('public-key', key.start, key.end - key.start);
  }
}

type Span = { start: number; end: number };

function prefixed(buf: Buffer, at: number): Span {
  return { start: at + 4, end: at + 4 + buf.readUInt32LE(at) };
}

/** The items of the length-prefixed sequence whose length field is at `at` (bounded by `end`). */
function items(buf: Buffer, at: number, end: number): Span[] {
  const seq = prefixed(buf, at);
  const out: Span[] = [];
  for (let p = seq.start; p + 4 <= Math.min(seq.end, end);) {
    const item = prefixed(buf, p);
    out.push(item);
    p = item.end;
  }
  return out;
}

/** One in-place change of a field or byte span; kinds that move bytes fix (or not) the offsets after them. */
function mutateField(apk: Buffer, z: Layout, f: Field, kind: string, rng: Rng): Buffer {
  const out = Buffer.from(apk);
  if (f.width !== 0) {
    const max = f.width === 8 ? 2n ** 64n - 1n : BigInt(2 ** (8 * f.width) - 1);
    const now = f.width === 8 ? out.readBigUInt64LE(f.at) : BigInt(f.width === 4 ? out.readUInt32LE(f.at) : out.readUInt16LE(f.at));
    const value = {
      zero: 0n, one: 1n, max, 'plus-one': now + 1n, 'minus-one': now - 1n,
      boundary: BigInt(pick(rng, BOUNDARY)), 'flip-bit': now ^ (1n << BigInt(Math.floor(rng() * 8 * f.width))),
    }[kind]!;
    const v = ((value % (max + 1n)) + max + 1n) % (max + 1n);
    if (f.width === 8) out.writeBigUInt64LE(v, f.at);
    else if (f.width === 4) out.writeUInt32LE(Number(v), f.at);
    else out.writeUInt16LE(Number(v), f.at);
    return out;
  }
  const at = f.at + Math.floor(rng() * f.length);
  switch (kind) {
    case 'flip-byte':
      out[at] ^= 1 + Math.floor(rng() * 255);
      return out;
    case 'zero-fill':
      out.fill(0, f.at, f.at + Math.min(f.length, 1 + Math.floor(rng() * 16)));
      return out;
    case 'truncate-inside':
      return out.subarray(0, at);
    case 'insert':
      return Buffer.concat([out.subarray(0, at), randomBytes(rng, 1 + Math.floor(rng() * 16)), out.subarray(at)]);
    default:
      return insertShifted(out, z, at, randomBytes(rng, 4 * (1 + Math.floor(rng() * 4))));
  }
}

/** Bytes inserted at `at` with the local-header offsets and the central directory offset after it moved along. */
function insertShifted(apk: Buffer, z: Layout, at: number, extra: Buffer): Buffer {
  const out = Buffer.concat([apk.subarray(0, at), extra, apk.subarray(at)]);
  const moved = (p: number) => (p >= at ? p + extra.length : p);
  for (const r of z.records) if (r.lfh >= at) out.writeUInt32LE(r.lfh + extra.length, moved(r.at + 42));
  if (z.cdOffset >= at) out.writeUInt32LE(z.cdOffset + extra.length, moved(z.eocd + 16));
  return out;
}

function randomBytes(rng: Rng, n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, () => Math.floor(rng() * 256)));
}

/** The changes that rewrite the archive: bytes before the end record, entries added, JAR files and manifest edited. */
function edits(apk: Buffer, z: Layout): Edit[] {
  const names = z.records.map((r) => r.name);
  const sf = names.filter((n) => /^META-INF\/[^/]+\.SF$/.test(n));
  const out: Edit[] = [
    {
      cls: 'eocd-gap', name: 'before-eocd', kinds: ['zip64-locator', 'second-eocd', 'gap-bytes', 'gap-and-cd-size'],
      apply: (a, kind, rng) => {
        const eocd = a.subarray(z.eocd);
        const gap = kind === 'zip64-locator' ? zip64Locator() : kind === 'second-eocd' ? Buffer.from(eocd) : randomBytes(rng, 1 + Math.floor(rng() * 64));
        const b = Buffer.concat([a.subarray(0, z.eocd), gap, eocd]);
        if (kind === 'gap-and-cd-size') b.writeUInt32LE(z.cdSize + gap.length, z.eocd + gap.length + 12); // the directory claims the gap
        return b;
      },
    },
    {
      cls: 'eocd', name: 'eocd.comment-appended', kinds: ['text', 'eocd-signature-inside', 'max-length'],
      apply: (a, kind, rng) => {
        const comment = kind === 'eocd-signature-inside' ? Buffer.concat([randomBytes(rng, 3), a.subarray(z.eocd, z.eocd + 22)]) : kind === 'max-length' ? Buffer.alloc(0xffff - (a.length - z.eocd - 22)) : Buffer.from('comment added after signing');
        const b = Buffer.concat([a, comment]);
        b.writeUInt16LE(a.length - z.eocd - 22 + comment.length, z.eocd + 20);
        return b;
      },
    },
    {
      cls: 'entries', name: 'entries.added', kinds: ['appended', 'duplicate-name', 'duplicate-manifest', 'empty-name', 'dot-dot-name'],
      apply: (a, kind, rng) => {
        const name = { appended: 'assets/added.txt', 'duplicate-name': pick(rng, names.filter((n) => !n.startsWith('META-INF/'))), 'duplicate-manifest': 'AndroidManifest.xml', 'empty-name': '', 'dot-dot-name': '../assets/blob.bin' }[kind]!;
        return rebuildZip(a, { add: [{ name, data: randomBytes(rng, 1 + Math.floor(rng() * 200)) }] });
      },
    },
    {
      cls: 'data-descriptor', name: 'descriptor.flag', kinds: ['lfh-only', 'cd-only', 'both', 'both-with-descriptor'],
      apply: (a, kind, rng) => dataDescriptorEdit(a, z, kind, rng),
    },
    {
      cls: 'meta-inf', name: 'meta-inf.added', kinds: ['unsigned-file', 'service-file', 'sf-like-name', 'duplicate-manifest-mf'],
      apply: (a, kind, rng) => {
        const name = { 'unsigned-file': 'META-INF/added.txt', 'service-file': 'META-INF/services/com.example.Plugin', 'sf-like-name': 'META-INF/EXTRA.SF', 'duplicate-manifest-mf': 'META-INF/MANIFEST.MF' }[kind]!;
        return rebuildZip(a, { add: [{ name, data: Buffer.from(`added after signing ${Math.floor(rng() * 1000)}\r\n`) }] });
      },
    },
  ];
  if (names.includes('META-INF/MANIFEST.MF')) out.push({ cls: 'meta-inf', name: 'meta-inf.manifest-mf', kinds: TEXT_KINDS, apply: (a, kind, rng) => editText(a, 'META-INF/MANIFEST.MF', kind, rng) });
  for (const file of sf) out.push({ cls: 'meta-inf', name: 'meta-inf.sf', kinds: [...TEXT_KINDS, 'apk-signed-line'], apply: (a, kind, rng) => editText(a, file, kind, rng) });
  if (minSdkAttribute(readEntry(apk, 'AndroidManifest.xml')) !== null) {
    out.push({ cls: 'manifest-minsdk', name: 'manifest.min-sdk', kinds: ['value'], apply: (a, _kind, rng) => setMinSdk(a, pick(rng, MIN_SDKS)) });
  }
  return out;
}

function zip64Locator(): Buffer {
  const b = Buffer.alloc(20);
  b.writeUInt32LE(0x07064b50, 0);
  b.writeUInt32LE(1, 16); // one disk
  return b;
}

/** The data-descriptor flag set where it was clear, in one header, the other or both (then a descriptor after the data). */
function dataDescriptorEdit(apk: Buffer, z: Layout, kind: string, rng: Rng): Buffer {
  const r = pick(rng, z.records);
  const out = Buffer.from(apk);
  if (kind !== 'cd-only') out.writeUInt16LE(out.readUInt16LE(r.lfh + 6) ^ 0x08, r.lfh + 6);
  if (kind !== 'lfh-only') out.writeUInt16LE(out.readUInt16LE(r.at + 8) ^ 0x08, r.at + 8);
  if (kind !== 'both-with-descriptor') return out;
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  apk.copy(descriptor, 4, r.at + 16, r.at + 28); // CRC-32 and both sizes, as the central directory has them
  return insertShifted(out, z, r.dataEnd, descriptor);
}

const TEXT_KINDS = ['digest-char', 'drop-line', 'duplicate-section', 'section-for-missing-entry', 'name-case', 'strip-final-newline', 'long-line'];

/** A JAR manifest or signature file with one line-level edit, recompressed with its CRC-32 and sizes fixed. */
function editText(apk: Buffer, name: string, kind: string, rng: Rng): Buffer | null {
  const text = readEntry(apk, name).toString('latin1');
  const lines = text.split('\r\n');
  const at = Math.floor(rng() * Math.max(1, lines.length - 1));
  let changed: string;
  if (kind === 'digest-char') {
    const digests = lines.map((l, i) => [l, i] as const).filter(([l]) => /-Digest(-Manifest(-Main-Attributes)?)?: /.test(l));
    if (!digests.length) return null;
    const [line, i] = pick(rng, digests);
    const p = line.indexOf(': ') + 2 + Math.floor(rng() * 4);
    lines[i] = line.slice(0, p) + (line[p] === 'A' ? 'B' : 'A') + line.slice(p + 1);
    changed = lines.join('\r\n');
  } else if (kind === 'drop-line') {
    changed = [...lines.slice(0, at), ...lines.slice(at + 1)].join('\r\n');
  } else if (kind === 'duplicate-section') {
    const sections = text.split('\r\n\r\n');
    const s = sections.find((x) => x.startsWith('Name: '));
    if (!s) return null;
    changed = `${text}${s}\r\n\r\n`;
  } else if (kind === 'section-for-missing-entry') {
    changed = `${text}Name: assets/missing.bin\r\nSHA-256-Digest: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n\r\n`;
  } else if (kind === 'name-case') {
    changed = text.replace('Name: ', 'name: ');
  } else if (kind === 'strip-final-newline') {
    changed = text.replace(/(\r\n)+$/, '');
  } else if (kind === 'long-line') {
    lines.splice(at, 0, `X-Padding: ${'x'.repeat(100)}`); // over 72 bytes without continuation lines
    changed = lines.join('\r\n');
  } else {
    const values = ['2', '3', '2, 3', '4', '', 'x'];
    const line = `X-Android-APK-Signed: ${pick(rng, values)}`;
    changed = /X-Android-APK-Signed: [^\r]*/.test(text) ? text.replace(/X-Android-APK-Signed: [^\r]*/, line) : text.replace('\r\n', `\r\n${line}\r\n`);
  }
  if (changed === text) return null;
  return rebuildZip(apk, { replace: new Map([[name, Buffer.from(changed, 'latin1')]]) });
}

/** Offset of the minSdkVersion attribute's typed value (Res_value) in a binary XML manifest, or null. */
function minSdkAttribute(xml: Buffer): number | null {
  const resIds: number[] = [];
  for (let at = xml.readUInt16LE(2); at + 8 <= xml.length;) {
    const type = xml.readUInt16LE(at);
    const headerSize = xml.readUInt16LE(at + 2);
    const size = xml.readUInt32LE(at + 4);
    if (size < 8 || at + size > xml.length) return null;
    if (type === 0x0180) for (let p = at + headerSize; p + 4 <= at + size; p += 4) resIds.push(xml.readUInt32LE(p));
    if (type === 0x0102) {
      const ext = at + headerSize;
      const first = ext + xml.readUInt16LE(ext + 8);
      const attrSize = xml.readUInt16LE(ext + 10);
      for (let i = 0; i < xml.readUInt16LE(ext + 12); i++) {
        const attr = first + i * attrSize;
        if (resIds[xml.readUInt32LE(attr + 4)] === MIN_SDK_ATTR) return attr + 8;
      }
    }
    at += size;
  }
  return null;
}

/** The manifest with minSdkVersion set to an integer value, recompressed into the archive. */
function setMinSdk(apk: Buffer, value: number): Buffer | null {
  const xml = readEntry(apk, 'AndroidManifest.xml');
  const at = minSdkAttribute(xml);
  if (at === null) return null;
  xml.writeUInt32LE(0xffffffff, at - 4); // no raw string value: the typed one is read
  xml.writeUInt8(0x10, at + 3); // TYPE_INT_DEC
  xml.writeUInt32LE(value >>> 0, at + 4);
  return rebuildZip(apk, { replace: new Map([['AndroidManifest.xml', xml]]) });
}

/** The region classes this base offers (a v1-only APK has no v2 records, an APK without JAR files no .SF). */
export function regionClasses(apk: Buffer): RegionClass[] {
  const z = layout(apk);
  const have = new Set<RegionClass>([...fields(apk, z).map((f) => f.cls), ...edits(apk, z).map((e) => e.cls)]);
  return REGION_CLASSES.filter((c) => have.has(c));
}

/** The class mutant `index` aims at: every class in turn, so any run of 13 consecutive indexes covers them all. */
export function classOf(index: number): RegionClass {
  return REGION_CLASSES[index % REGION_CLASSES.length];
}

/**
 * Mutant `index` of `base` under `seed`: a region of classOf(index) (or of any class the base offers, when it offers
 * not that one), a kind of change. An edit that does not apply to the region drawn (no digest line, nothing changed)
 * is drawn again.
 */
export function makeMutant(baseName: string, apk: Buffer, seed: number, index: number): Mutant {
  const rng = mutantRng(seed, index);
  const z = layout(apk);
  const all = fields(apk, z);
  const allEdits = edits(apk, z);
  const offered = regionClasses(apk);
  const classes = offered.includes(classOf(index)) ? [classOf(index)] : offered;
  for (let attempt = 0; attempt < 16; attempt++) {
    const c = pick(rng, classes);
    const inPlace = all.filter((f) => f.cls === c);
    const rewrites = allEdits.filter((e) => e.cls === c);
    // Half the draws go to rewrites where the class has both, so neither starves the other.
    const useEdit = rewrites.length > 0 && (inPlace.length === 0 || rng() < 0.5);
    if (useEdit) {
      const e = pick(rng, rewrites);
      const kind = pick(rng, e.kinds);
      const bytes = e.apply(apk, kind, rng);
      if (bytes && !bytes.equals(apk)) return { base: baseName, seed, index, cls: c, region: e.name, kind, bytes };
    } else if (inPlace.length) {
      const f = pick(rng, inPlace);
      const kind = pick(rng, f.width === 0 ? BYTES_KINDS : [...FIELD_KINDS, 'truncate-inside']);
      const bytes = kind === 'truncate-inside' && f.width !== 0 ? apk.subarray(0, f.at + Math.floor(rng() * f.length)) : mutateField(apk, z, f, kind, rng);
      if (!bytes.equals(apk)) return { base: baseName, seed, index, cls: c, region: f.name, kind, bytes };
    }
  }
  throw new Error(`${baseName}: no mutant of class ${classes.join('/')} for seed ${seed} index ${index}`);
}
