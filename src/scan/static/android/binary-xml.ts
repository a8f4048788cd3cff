import { XmlBudget, type XmlAttribute, type XmlElement, type XmlValue } from '../package/xml-node';
import { StringPool, corrupt } from './string-pool';

// Chunk types from frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h
const RES_XML_TYPE = 0x0003;
const RES_STRING_POOL_TYPE = 0x0001;
const RES_XML_RESOURCE_MAP_TYPE = 0x0180;
const RES_XML_START_ELEMENT_TYPE = 0x0102;
const RES_XML_END_ELEMENT_TYPE = 0x0103;
const RES_XML_CDATA_TYPE = 0x0104;

// Res_value data types
const TYPE_REFERENCE = 0x01;
const TYPE_STRING = 0x03;
const TYPE_INT_DEC = 0x10;
const TYPE_INT_HEX = 0x11;
const TYPE_INT_BOOLEAN = 0x12;

/** True when the buffer starts like a binary XML document (ResXMLTree header). */
export function isBinaryXml(buf: Buffer): boolean {
  return buf.length >= 8 && buf.readUInt16LE(0) === RES_XML_TYPE && buf.readUInt16LE(2) === 8;
}

/** Parses binary AXML (as in an APK's AndroidManifest.xml) into an element tree; throws on malformed input. */
export function parseBinaryXml(buf: Buffer): XmlElement {
  if (!isBinaryXml(buf)) throw corrupt('no binary XML header');
  const end = Math.min(buf.readUInt32LE(4), buf.length);
  let pool: StringPool | null = null;
  let resourceMap: number[] = [];
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const budget = new XmlBudget();

  for (let at = 8; at + 8 <= end; ) {
    const type = buf.readUInt16LE(at);
    const headerSize = buf.readUInt16LE(at + 2);
    const size = buf.readUInt32LE(at + 4);
    if (size < 8 || headerSize < 8 || headerSize > size || at + size > end) throw corrupt(`chunk 0x${type.toString(16)} at ${at} overruns the document`);
    if (type === RES_STRING_POOL_TYPE) pool = new StringPool(buf, at, at + size);
    else if (type === RES_XML_RESOURCE_MAP_TYPE) resourceMap = readResourceMap(buf, at + headerSize, at + size);
    else if (type === RES_XML_START_ELEMENT_TYPE) {
      if (!pool) throw corrupt('element before string pool');
      budget.element(stack.length);
      const el = readStartElement(buf, at + headerSize, at + size, pool, resourceMap, budget);
      if (stack.length) stack[stack.length - 1].children.push(el);
      else if (!root) root = el;
      else throw corrupt('second root element');
      stack.push(el);
    } else if (type === RES_XML_END_ELEMENT_TYPE) {
      if (!stack.pop()) throw corrupt('end element without start');
    } else if (type === RES_XML_CDATA_TYPE) {
      if (!pool) throw corrupt('text before string pool');
      const text = pool.get(u32(buf, at + headerSize, at + size)) ?? '';
      budget.addText(text.length);
      if (stack.length) stack[stack.length - 1].text += text;
    }
    // Namespace chunks and unknown chunk types carry nothing the rules need.
    at += size;
  }
  if (!root) throw corrupt('no root element');
  if (stack.length) throw corrupt('document ends inside an element');
  return root;
}

function readResourceMap(buf: Buffer, from: number, to: number): number[] {
  const ids: number[] = [];
  for (let p = from; p + 4 <= to; p += 4) ids.push(buf.readUInt32LE(p));
  return ids;
}

function readStartElement(buf: Buffer, ext: number, end: number, pool: StringPool, resourceMap: number[], budget: XmlBudget): XmlElement {
  if (ext + 20 > end) throw corrupt('truncated element');
  const name = pool.get(buf.readUInt32LE(ext + 4)) ?? '';
  const attributeStart = buf.readUInt16LE(ext + 8);
  const attributeSize = buf.readUInt16LE(ext + 10);
  const attributeCount = buf.readUInt16LE(ext + 12);
  if (attributeCount > 0 && attributeSize < 20) throw corrupt('attribute record too small');
  const attributes: XmlAttribute[] = [];
  for (let i = 0; i < attributeCount; i++) {
    const at = ext + attributeStart + i * attributeSize;
    if (at + 20 > end) throw corrupt('attribute past end of element');
    budget.attribute();
    attributes.push(readAttribute(buf, at, pool, resourceMap));
  }
  return { name, attributes, children: [], text: '' };
}

function readAttribute(buf: Buffer, at: number, pool: StringPool, resourceMap: number[]): XmlAttribute {
  const nsIndex = buf.readUInt32LE(at);
  const nameIndex = buf.readUInt32LE(at + 4);
  const rawIndex = buf.readUInt32LE(at + 8);
  const dataType = buf[at + 15];
  const data = buf.readUInt32LE(at + 16);
  // The resource map is parallel to the first string-pool entries: attribute names with resource ids (0 is none,
  // as ResXMLParser::getAttributeNameResID reads it).
  const mapped = nameIndex < resourceMap.length ? resourceMap[nameIndex] : 0;
  const raw = rawIndex === 0xffffffff ? null : pool.get(rawIndex);
  return {
    namespace: nsIndex === 0xffffffff ? '' : pool.get(nsIndex) ?? '',
    name: pool.get(nameIndex) ?? '',
    resourceId: mapped === 0 ? null : mapped,
    raw,
    value: toValue(dataType, data, raw, pool),
  };
}

function toValue(dataType: number, data: number, raw: string | null, pool: StringPool): XmlValue {
  switch (dataType) {
    case TYPE_STRING: return { type: 'string', value: pool.get(data) ?? '' };
    case TYPE_INT_BOOLEAN: return { type: 'bool', value: data !== 0 };
    case TYPE_INT_DEC: return { type: 'int', value: data | 0 };
    case TYPE_INT_HEX: return { type: 'int', value: data >>> 0 };
    case TYPE_REFERENCE: return { type: 'reference', id: data >>> 0, name: null };
    default: return raw !== null ? { type: 'string', value: raw } : { type: 'other', raw: null, data };
  }
}

function u32(buf: Buffer, at: number, end: number): number {
  if (at + 4 > end) throw corrupt('truncated text node');
  return buf.readUInt32LE(at);
}
