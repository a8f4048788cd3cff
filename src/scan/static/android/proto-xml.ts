import { XmlBudget, type XmlAttribute, type XmlElement, type XmlValue } from '../package/xml-node';
import { firstField, readFields, str } from './protobuf';
import { corrupt } from './string-pool';

// Field numbers of aapt2's Resources.proto (package aapt.pb), the XML format inside app bundles.
const NODE = { element: 1, text: 2 } as const;
const ELEMENT = { namespaceUri: 2, name: 3, attribute: 4, child: 5 } as const;
const ATTRIBUTE = { namespaceUri: 1, name: 2, value: 3, resourceId: 5, compiledItem: 6 } as const;
const ITEM = { ref: 1, str: 2, rawStr: 3, prim: 7 } as const;
const REFERENCE = { id: 2, name: 3 } as const;
const PRIMITIVE = { intDecimal: 6, intHex: 7, boolean: 8 } as const;

/** Parses an aapt2 protobuf XmlNode (e.g. base/manifest/AndroidManifest.xml of an AAB) into an element tree. */
export function parseProtoXml(buf: Buffer): XmlElement {
  const element = firstField(buf, NODE.element);
  if (!element?.bytes) throw corrupt('protobuf XML has no root element');
  return readElement(element.bytes, 0, new XmlBudget());
}

function readElement(buf: Buffer, depth: number, budget: XmlBudget): XmlElement {
  budget.element(depth);
  const el: XmlElement = { name: '', attributes: [], children: [], text: '' };
  for (const f of readFields(buf)) {
    if (f.field === ELEMENT.name) el.name = str(f);
    else if (f.field === ELEMENT.attribute && f.bytes) {
      budget.attribute();
      el.attributes.push(readAttribute(f.bytes));
    } else if (f.field === ELEMENT.child && f.bytes) {
      for (const node of readFields(f.bytes)) {
        if (node.field === NODE.element && node.bytes) el.children.push(readElement(node.bytes, depth + 1, budget));
        else if (node.field === NODE.text) {
          const text = str(node);
          budget.addText(text.length);
          el.text += text;
        }
      }
    }
  }
  return el;
}

function readAttribute(buf: Buffer): XmlAttribute {
  let namespace = '';
  let name = '';
  let raw: string | null = null;
  let resourceId: number | null = null;
  let item: Buffer | null = null;
  for (const f of readFields(buf)) {
    if (f.field === ATTRIBUTE.namespaceUri) namespace = str(f);
    else if (f.field === ATTRIBUTE.name) name = str(f);
    else if (f.field === ATTRIBUTE.value) raw = str(f);
    else if (f.field === ATTRIBUTE.resourceId) resourceId = f.low32;
    else if (f.field === ATTRIBUTE.compiledItem) item = f.bytes;
  }
  return {
    namespace,
    name,
    resourceId: resourceId === 0 ? null : resourceId,
    raw,
    value: item ? readItem(item, raw) : raw !== null ? { type: 'string', value: raw } : { type: 'other', raw: null, data: 0 },
  };
}

function readItem(buf: Buffer, raw: string | null): XmlValue {
  for (const f of readFields(buf)) {
    if (f.field === ITEM.ref && f.bytes) return readReference(f.bytes);
    if ((f.field === ITEM.str || f.field === ITEM.rawStr) && f.bytes) {
      const value = firstField(f.bytes, 1);
      return { type: 'string', value: value ? str(value) : '' };
    }
    if (f.field === ITEM.prim && f.bytes) return readPrimitive(f.bytes, raw);
  }
  return raw !== null ? { type: 'string', value: raw } : { type: 'other', raw: null, data: 0 };
}

function readReference(buf: Buffer): XmlValue {
  let id = 0;
  let name: string | null = null;
  for (const f of readFields(buf)) {
    if (f.field === REFERENCE.id) id = f.low32;
    else if (f.field === REFERENCE.name) name = str(f);
  }
  return { type: 'reference', id, name };
}

function readPrimitive(buf: Buffer, raw: string | null): XmlValue {
  let first: number | undefined;
  for (const f of readFields(buf)) {
    first ??= f.varint;
    // int32 negatives arrive as 64-bit two's complement varints; their low 32 bits read as signed are the value.
    if (f.field === PRIMITIVE.intDecimal) return { type: 'int', value: f.low32 | 0 };
    if (f.field === PRIMITIVE.intHex) return { type: 'int', value: f.low32 };
    if (f.field === PRIMITIVE.boolean) return { type: 'bool', value: f.varint !== 0 };
  }
  return { type: 'other', raw, data: first ?? 0 };
}
