/**
 * The manifest's attributes as Android reads them, or the package is unreadable (docs/scan-evidence.md, "The
 * manifest Android installs"). Android reads framework attributes through styleables, which match by resource id
 * alone (AttributeResolution.cpp RetrieveAttributes: a merge of the element's attribute ids, in ascending order,
 * with the styleable's), and a few attributes by namespace and name string (XmlPullParser.getAttributeValue: the
 * manifest's `package`, an intent filter's action and category names). A crafted manifest can make a name-reading
 * scanner and the device disagree: a decoy `android:debuggable="false"` without an id before the real one, a
 * second plain `package`. Every element is checked for the shapes on which two honest readers could disagree, and
 * any of them makes the package unreadable (graded F): aapt and aapt2 never write them.
 */
import { UnreadablePackageError } from '../package/errors';
import { ANDROID_ATTR_BY_NAME, ANDROID_ATTR_IDS, ANDROID_NS, namedAttr, showValue, type XmlElement } from '../package/xml-node';

/** Android's own check of a package name (PackageParser.validateName with a separator required). */
const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

/**
 * Checks every element's attributes and returns the package name Android reads. `ordered` is true for binary XML,
 * which the device reads as it is; an App Bundle's protobuf XML is sorted by aapt2 when bundletool builds the APKs.
 */
export function checkManifestAttributes(root: XmlElement, ordered: boolean): string {
  for (const stack = [root]; stack.length; ) {
    const el = stack.pop() as XmlElement;
    checkElement(el, ordered);
    for (const c of el.children) stack.push(c);
  }
  return packageName(root);
}

function checkElement(el: XmlElement, ordered: boolean): void {
  const seen = new Set<number>();
  let previous = 0;
  for (const a of el.attributes) {
    if (a.resourceId === null) continue;
    const known = ANDROID_ATTR_IDS.get(a.resourceId);
    if (seen.has(a.resourceId)) {
      throw unreadable(`<${el.name}> has two attributes with resource id 0x${hex(a.resourceId)}${known ? ` (android:${known})` : ''}; Android reads one of them, and which depends on their order`);
    }
    seen.add(a.resourceId);
    // The styleable merge skips an attribute whose id is lower than one before it: the device never reads it.
    if (ordered && a.resourceId < previous) {
      throw unreadable(`<${el.name}>'s attributes are not in ascending resource-id order (0x${hex(a.resourceId)} after 0x${hex(previous)}), so Android skips some of them`);
    }
    previous = a.resourceId;
  }
  for (const a of el.attributes) {
    // An android:-named rule attribute whose id is another attribute's: the device reads it as that other one.
    const expected = a.namespace === ANDROID_NS ? ANDROID_ATTR_BY_NAME.get(a.name) : undefined;
    if (expected !== undefined && a.resourceId !== null && a.resourceId !== expected) {
      throw unreadable(`<${el.name}> names an attribute android:${a.name} but gives it resource id 0x${hex(a.resourceId)}; Android reads attributes by id`);
    }
  }
}

/**
 * The `package` Android installs: the first attribute named `package` without a namespace, read by name whatever its
 * resource id, as its raw string. None, two, a typed value that disagrees with the raw string, or a name Android
 * would refuse make the package unreadable: the scan must never fall back to another name.
 */
function packageName(root: XmlElement): string {
  const all = root.attributes.filter((a) => a.namespace === '' && a.name === 'package');
  if (all.length === 0) throw unreadable('<manifest> has no package attribute');
  if (all.length > 1) throw unreadable('<manifest> has two package attributes');
  const attr = namedAttr(root, '', 'package')!;
  const typed = attr.value.type === 'string' ? attr.value.value : null;
  if (attr.raw != null && typed !== null && attr.raw !== typed) {
    throw unreadable(`<manifest>'s package reads "${attr.raw}" as raw text and "${typed}" as its typed value`);
  }
  const name = attr.raw ?? typed ?? showValue(attr.value);
  if (!PACKAGE_NAME.test(name)) throw unreadable(`<manifest package="${name.slice(0, 100)}"> is not a package name Android accepts`);
  return name;
}

function hex(id: number): string {
  return id.toString(16).padStart(8, '0');
}

function unreadable(why: string): UnreadablePackageError {
  return new UnreadablePackageError('corrupt-manifest', `the manifest is not read the same way by every reader: ${why}`);
}
