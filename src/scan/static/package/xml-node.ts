import { LimitExceededError } from './errors';
import { LIMITS } from './limits';

/** A decoded attribute value of compiled Android XML (binary AXML or aapt2 protobuf XML). */
export type XmlValue =
  | { type: 'string'; value: string }
  | { type: 'bool'; value: boolean }
  | { type: 'int'; value: number }
  /**
   * A resource reference ("@bool/debuggable"). `resolved` is the value the rules judge, taken over every
   * configuration of the package's resource table (see manifest-references.ts): undefined when not looked up, null
   * when the table gives no value the rules can read. `alternatives` lists every distinct value a device may read
   * (one per configuration), e.g. the res/xml and res/xml-v24 files of a network security config.
   */
  | { type: 'reference'; id: number; name: string | null; resolved?: XmlValue | null; alternatives?: XmlValue[] }
  | { type: 'other'; raw: string | null; data: number };

export type XmlAttribute = {
  /** The namespace URI as the document writes it ('' for none). */
  namespace: string;
  /** The name as the document's string pool writes it (obfuscators may rename or empty it). */
  name: string;
  /** The attribute's resource id from the resource map (framework attributes are 0x0101xxxx); null when unmapped. */
  resourceId: number | null;
  /** The raw string value the document keeps beside the typed one, if any (what Android's getAttributeValue reads). */
  raw?: string | null;
  value: XmlValue;
};

export type XmlElement = {
  name: string;
  attributes: XmlAttribute[];
  children: XmlElement[];
  /** Concatenated text content (e.g. a <domain> name in a network security config). */
  text: string;
};

export const ANDROID_NS = 'http://schemas.android.com/apk/res/android';

/**
 * Framework attribute ids (android.R.attr) the rules use. Android reads manifest attributes through styleables,
 * which match by resource id only: an attribute whose name string was stripped or renamed is still read, and an
 * `android:`-named attribute without the id is not read at all.
 */
export const ANDROID_ATTR_IDS: ReadonlyMap<number, string> = new Map([
  [0x01010003, 'name'],
  [0x01010006, 'permission'],
  [0x01010007, 'readPermission'],
  [0x01010008, 'writePermission'],
  [0x01010009, 'protectionLevel'],
  [0x0101000f, 'debuggable'],
  [0x01010010, 'exported'],
  [0x01010012, 'taskAffinity'],
  [0x0101001b, 'grantUriPermissions'],
  [0x0101001d, 'launchMode'],
  [0x01010018, 'authorities'],
  [0x01010027, 'scheme'],
  [0x01010028, 'host'],
  [0x0101020c, 'minSdkVersion'],
  [0x0101021b, 'versionCode'],
  [0x0101021c, 'versionName'],
  [0x01010270, 'targetSdkVersion'],
  [0x01010271, 'maxSdkVersion'],
  [0x01010272, 'testOnly'],
  [0x01010280, 'allowBackup'],
  [0x010104ec, 'usesCleartextTraffic'],
  [0x010104eb, 'fullBackupContent'],
  [0x01010527, 'networkSecurityConfig'],
  [0x0101054c, 'targetSandboxVersion'],
  [0x01010576, 'versionCodeMajor'],
  // API 31: newer than Debian's framework-res.apk, the oracle of the others (android.R.attr.dataExtractionRules).
  [0x0101063e, 'dataExtractionRules'],
]);

/** Framework attribute name -> id, for the attributes of ANDROID_ATTR_IDS. */
export const ANDROID_ATTR_BY_NAME: ReadonlyMap<string, number> = new Map([...ANDROID_ATTR_IDS].map(([id, name]) => [name, id]));

/**
 * The framework attribute `name` of an element, matched by resource id only, as Android's styleables read it
 * (manifest-attributes.ts makes a package with two attributes of one id unreadable, so the first is the only one).
 */
export function androidAttr(el: XmlElement, name: string): XmlValue | undefined {
  const id = ANDROID_ATTR_BY_NAME.get(name);
  return id === undefined ? undefined : el.attributes.find((a) => a.resourceId === id)?.value;
}

/**
 * The first attribute with this namespace URI and name string, whatever its resource id: how Android's
 * XmlPullParser.getAttributeValue(ns, name) finds an attribute (the manifest's `package`, an intent filter's
 * `<action android:name>`, a network security config's plain attributes).
 */
export function namedAttr(el: XmlElement, namespace: string, name: string): XmlAttribute | undefined {
  return el.attributes.find((a) => a.namespace === namespace && a.name === name);
}

/** An attribute without namespace, by name string (network security config files). */
export function plainAttr(el: XmlElement, name: string): XmlValue | undefined {
  return namedAttr(el, '', name)?.value;
}

/** The value the rules read: a resolved reference reads as the value it resolved to. */
function effective(v: XmlValue | undefined): XmlValue | undefined {
  return v?.type === 'reference' && v.resolved ? v.resolved : v;
}

/** Reads a value as a boolean, accepting compiled booleans and the literal strings "true"/"false". */
export function asBool(value: XmlValue | undefined): boolean | undefined {
  const v = effective(value);
  if (!v) return undefined;
  if (v.type === 'bool') return v.value;
  if (v.type === 'string') return v.value === 'true' ? true : v.value === 'false' ? false : undefined;
  return undefined;
}

export function asInt(value: XmlValue | undefined): number | undefined {
  const v = effective(value);
  if (!v) return undefined;
  if (v.type === 'int') return v.value;
  if (v.type === 'string' && /^-?\d+$/.test(v.value.trim())) return Number(v.value.trim());
  return undefined;
}

export function asString(value: XmlValue | undefined): string | undefined {
  const v = effective(value);
  if (!v) return undefined;
  if (v.type === 'string') return v.value;
  if (v.type === 'other' && v.raw !== null) return v.raw;
  return undefined;
}

/** Renders a value as it would appear in the manifest source, for finding details. */
export function showValue(v: XmlValue | undefined): string {
  if (!v) return '(absent)';
  switch (v.type) {
    case 'string': return v.value;
    case 'bool': return String(v.value);
    case 'int': return String(v.value);
    case 'reference': return v.name ? `@${v.name}` : `@0x${v.id.toString(16).padStart(8, '0')}`;
    case 'other': return v.raw ?? `0x${v.data.toString(16)}`;
  }
}

/**
 * An `android:` attribute as the manifest source writes it, for finding details; a reference also says what it
 * resolved to, e.g. `android:debuggable="@bool/debuggable" (resolves to true)`.
 */
export function describeAttr(name: string, v: XmlValue | undefined): string {
  const source = `android:${name}="${showValue(v)}"`;
  if (v?.type !== 'reference' || v.resolved === undefined) return source;
  return `${source} (${v.resolved ? `resolves to ${showValue(v.resolved)}` : 'not resolvable through the package\'s resources'})`;
}

export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/**
 * What one compiled XML document may build (binary AXML or protobuf XML): elements, attributes, text and depth are
 * counted as they are read, so a crafted document stops at a limit instead of filling the heap.
 */
export class XmlBudget {
  private elements = 0;
  private attributes = 0;
  private text = 0;

  element(depth: number): void {
    if (depth >= LIMITS.xmlDepth) throw new LimitExceededError('xmlDepth', `compiled XML nests over ${LIMITS.xmlDepth} elements deep`);
    if (++this.elements > LIMITS.xmlElements) throw new LimitExceededError('xmlElements', `compiled XML has over ${LIMITS.xmlElements} elements`);
  }

  attribute(): void {
    if (++this.attributes > LIMITS.xmlAttributes) throw new LimitExceededError('xmlAttributes', `compiled XML has over ${LIMITS.xmlAttributes} attributes`);
  }

  addText(chars: number): void {
    this.text += chars;
    if (this.text > LIMITS.xmlText) throw new LimitExceededError('xmlText', `compiled XML has over ${LIMITS.xmlText} characters of text`);
  }
}
