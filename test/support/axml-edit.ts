/**
 * Small edits of compiled Android XML (a manifest aapt wrote), the tricks a crafted package plays on a scanner:
 * rename a string in place, give a string another resource id, move an attribute within its element, drop an
 * attribute's namespace. Each edit keeps the document's layout (ResourceTypes.h), so aapt and aapt2 still read it,
 * and the tests take their expected reading from those tools.
 */

const STRING_POOL = 0x0001;
const RESOURCE_MAP = 0x0180;
const START_ELEMENT = 0x0102;
const UTF8_FLAG = 0x100;
const NO_INDEX = 0xffffffff;

type Chunk = { type: number; at: number; headerSize: number; size: number };

function chunks(xml: Buffer): Chunk[] {
  const out: Chunk[] = [];
  for (let at = xml.readUInt16LE(2); at + 8 <= xml.length; ) {
    const c = { type: xml.readUInt16LE(at), at, headerSize: xml.readUInt16LE(at + 2), size: xml.readUInt32LE(at + 4) };
    out.push(c);
    at += c.size;
  }
  return out;
}

function pool(xml: Buffer): { strings: string[]; locate: (i: number) => { at: number; utf8: boolean } } {
  const c = chunks(xml).find((k) => k.type === STRING_POOL)!;
  const count = xml.readUInt32LE(c.at + 8);
  const utf8 = (xml.readUInt32LE(c.at + 16) & UTF8_FLAG) !== 0;
  const stringsStart = c.at + xml.readUInt32LE(c.at + 20);
  const locate = (i: number) => ({ at: stringsStart + xml.readUInt32LE(c.at + c.headerSize + i * 4), utf8 });
  const strings = Array.from({ length: count }, (_, i) => {
    let { at } = locate(i);
    if (utf8) {
      at += xml[at] & 0x80 ? 2 : 1; // characters
      const bytes = xml[at] & 0x80 ? ((xml[at] & 0x7f) << 8) | xml[at + 1] : xml[at];
      at += xml[at] & 0x80 ? 2 : 1;
      return xml.toString('utf8', at, at + bytes);
    }
    const len = xml.readUInt16LE(at);
    return xml.toString('utf16le', at + 2, at + 2 + len * 2);
  });
  return { strings, locate };
}

/** The index of string `s` in the pool; the `nth` (0-based) when the pool holds it more than once. */
export function stringIndex(xml: Buffer, s: string, nth = 0): number {
  const found = pool(xml).strings.flatMap((v, i) => (v === s ? [i] : []));
  if (found.length <= nth) throw new Error(`the string pool has no ${nth > 0 ? `${nth + 1}th ` : ''}"${s}"`);
  return found[nth];
}

/** Renames every pool string equal to `from` to `to`, of the same length (ASCII), in place. */
export function renameString(xml: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error('renameString keeps lengths');
  const out = Buffer.from(xml);
  const { strings, locate } = pool(out);
  let renamed = 0;
  strings.forEach((v, i) => {
    if (v !== from) return;
    const { at, utf8 } = locate(i);
    if (utf8) out.write(to, at + 2, 'utf8');
    else out.write(to, at + 2, 'utf16le');
    renamed++;
  });
  if (renamed === 0) throw new Error(`no string "${from}" to rename`);
  return out;
}

/** Gives the pool string `name` (which must be among the mapped ones) the resource id `id` in the resource map. */
export function setResourceId(xml: Buffer, name: string, id: number): Buffer {
  const out = Buffer.from(xml);
  const index = stringIndex(out, name);
  const map = chunks(out).find((k) => k.type === RESOURCE_MAP)!;
  if (map.at + map.headerSize + index * 4 + 4 > map.at + map.size) throw new Error(`"${name}" has no resource-map slot`);
  out.writeUInt32LE(id >>> 0, map.at + map.headerSize + index * 4);
  return out;
}

type AttributeRecord = { at: number; ns: number; name: number };

function attributesOf(xml: Buffer, element: string): AttributeRecord[] {
  const { strings } = pool(xml);
  const c = chunks(xml).find((k) => k.type === START_ELEMENT && strings[xml.readUInt32LE(k.at + k.headerSize + 4)] === element);
  if (!c) throw new Error(`no <${element}>`);
  const ext = c.at + c.headerSize;
  const start = xml.readUInt16LE(ext + 8);
  const size = xml.readUInt16LE(ext + 10);
  const count = xml.readUInt16LE(ext + 12);
  return Array.from({ length: count }, (_, i) => {
    const at = ext + start + i * size;
    return { at, ns: xml.readUInt32LE(at), name: xml.readUInt32LE(at + 4) };
  });
}

/** Moves the attribute of `element` whose name string is `name` (its `nth` such) to position `to`. */
export function moveAttribute(xml: Buffer, element: string, name: string, to: number, nth = 0): Buffer {
  const out = Buffer.from(xml);
  const { strings } = pool(out);
  const records = attributesOf(out, element);
  const from = records.map((r, i) => (strings[r.name] === name ? i : -1)).filter((i) => i >= 0)[nth];
  if (from === undefined) throw new Error(`<${element}> has no attribute named "${name}"`);
  const size = records.length > 1 ? records[1].at - records[0].at : 20;
  const bytes = records.map((r) => Buffer.from(out.subarray(r.at, r.at + size)));
  const [moved] = bytes.splice(from, 1);
  bytes.splice(to, 0, moved);
  Buffer.concat(bytes).copy(out, records[0].at);
  return out;
}

/** Points the namespace of `element`'s attribute named `name` (its `nth` such) at the pool string `namespace`. */
export function setAttributeNamespace(xml: Buffer, element: string, name: string, namespace: string | null, nth = 0): Buffer {
  const out = Buffer.from(xml);
  const { strings } = pool(out);
  const record = attributesOf(out, element).filter((r) => strings[r.name] === name)[nth];
  if (!record) throw new Error(`<${element}> has no attribute named "${name}"`);
  out.writeUInt32LE(namespace === null ? NO_INDEX : stringIndex(out, namespace), record.at);
  return out;
}
