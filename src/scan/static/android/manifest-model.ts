import { ANDROID_NS, androidAttr, asBool, asInt, asString, childrenNamed, describeAttr, namedAttr, type XmlElement, type XmlValue } from '../package/xml-node';
import { checkManifestAttributes } from './manifest-attributes';
import { resolveReferences } from './manifest-references';
import type { ResourceResolver } from './resource-table';
import { longVersionCode } from './version-code';

export type ComponentKind = 'activity' | 'activity-alias' | 'service' | 'receiver' | 'provider';

export type IntentFilter = { actions: string[]; categories: string[]; schemes: string[]; hosts: string[] };

export type Component = {
  kind: ComponentKind;
  /** Fully qualified class name (".Main" resolved against the package). */
  name: string;
  /** The declared android:exported, undefined when absent. */
  exportedAttr: boolean | undefined;
  /** android:exported as written, for finding details (a resource reference with the value it resolves to). */
  exportedText: string | undefined;
  permission: string | undefined;
  readPermission: string | undefined;
  writePermission: string | undefined;
  intentFilters: IntentFilter[];
  taskAffinity: string | undefined;
  launchMode: number | undefined;
  grantUriPermissions: boolean;
  authorities: string | undefined;
};

/** The facts of a manifest the Android rules look at. */
export type ManifestModel = {
  packageName: string;
  versionName: string | null;
  /** The long version code Android gives the installed package (version-code.ts), or null when it names none. */
  versionCode: number | null;
  /** Declared minSdkVersion, or 1 when absent (the platform default); a preview codename reads as 10,000. */
  minSdk: number;
  /** The preview codename minSdkVersion names ("Baklava"), or null for a number. */
  minSdkCodename: string | null;
  /** Declared targetSdkVersion, or minSdk when absent (the platform default). */
  targetSdk: number;
  /** Declared android:targetSandboxVersion (1 when absent); 2 and above require an APK Signature Scheme v2+ signature. */
  targetSandboxVersion: number;
  application: XmlElement | null;
  components: Component[];
  /** Custom permissions this package defines: name -> protectionLevel as written (e.g. "normal", "signature"). */
  definedPermissions: Map<string, string>;
  /**
   * Permissions the package requests (<uses-permission>, and <uses-permission-sdk-23>, which is requested from API
   * 23), without those whose android:maxSdkVersion is below minSdk: no device the app installs on grants them.
   * Sorted, each once.
   */
  requestedPermissions: string[];
};

const COMPONENT_KINDS: readonly ComponentKind[] = ['activity', 'activity-alias', 'service', 'receiver', 'provider'];
// android:protectionLevel flag values (R.attr.protectionLevel): base levels in the low 4 bits.
const PROTECTION_LEVELS = ['normal', 'dangerous', 'signature', 'signatureOrSystem'];

/**
 * Builds the model of the manifest Android installs, or throws UnreadablePackageError when readers could disagree
 * on it (manifest-attributes.ts). With a resolver (the package's resource table), every attribute a rule reads that
 * is written as a resource reference (android:debuggable="@bool/debuggable") is first resolved in place over every
 * configuration (manifest-references.ts), so the model and the rules reading the element tree see the value judged.
 * `ordered` is true for binary XML (an APK's manifest as the device reads it), false for an App Bundle's.
 */
export function buildManifestModel(root: XmlElement, resolver: ResourceResolver | null = null, ordered = true): ManifestModel {
  const packageName = checkManifestAttributes(root, ordered);
  if (resolver) resolveReferences(root, resolver);
  const usesSdk = childrenNamed(root, 'uses-sdk')[0];
  const minSdkValue = usesSdk && androidAttr(usesSdk, 'minSdkVersion');
  const minSdk = sdkLevel(minSdkValue) ?? 1;
  const minSdkCodename = asInt(minSdkValue) === undefined && minSdk === 10_000 ? asString(minSdkValue) ?? null : null;
  const targetSdk = sdkLevel(usesSdk && androidAttr(usesSdk, 'targetSdkVersion')) ?? minSdk;
  const application = childrenNamed(root, 'application')[0] ?? null;
  const components = application
    ? application.children.filter((c) => (COMPONENT_KINDS as readonly string[]).includes(c.name)).map((c) => toComponent(c, packageName))
    : [];
  const definedPermissions = new Map<string, string>();
  for (const p of childrenNamed(root, 'permission')) {
    const name = asString(androidAttr(p, 'name'));
    if (name) definedPermissions.set(name, protectionLevel(androidAttr(p, 'protectionLevel')));
  }
  const targetSandboxVersion = asInt(androidAttr(root, 'targetSandboxVersion')) ?? 1;
  const requestedPermissions = requested(root, minSdk);
  return { packageName, versionName: asString(androidAttr(root, 'versionName')) ?? null, versionCode: longVersionCode(root), minSdk, minSdkCodename, targetSdk, targetSandboxVersion, application, components, definedPermissions, requestedPermissions };
}

function requested(root: XmlElement, minSdk: number): string[] {
  const names = new Set<string>();
  for (const el of [...childrenNamed(root, 'uses-permission'), ...childrenNamed(root, 'uses-permission-sdk-23')]) {
    const name = asString(androidAttr(el, 'name'));
    const maxSdk = asInt(androidAttr(el, 'maxSdkVersion'));
    if (name && (maxSdk === undefined || maxSdk >= minSdk)) names.add(name);
  }
  return [...names].sort();
}

function toComponent(el: XmlElement, packageName: string): Component {
  // An activity-alias is exported/protected like an activity; its own name is what other apps address.
  const exported = androidAttr(el, 'exported');
  return {
    kind: el.name as ComponentKind,
    name: qualify(asString(androidAttr(el, 'name')) ?? '(unnamed)', packageName),
    exportedAttr: asBool(exported),
    exportedText: exported && describeAttr('exported', exported),
    permission: asString(androidAttr(el, 'permission')),
    readPermission: asString(androidAttr(el, 'readPermission')),
    writePermission: asString(androidAttr(el, 'writePermission')),
    intentFilters: childrenNamed(el, 'intent-filter').map(toIntentFilter),
    taskAffinity: asString(androidAttr(el, 'taskAffinity')),
    launchMode: asInt(androidAttr(el, 'launchMode')),
    grantUriPermissions: asBool(androidAttr(el, 'grantUriPermissions')) ?? false,
    authorities: asString(androidAttr(el, 'authorities')),
  };
}

function toIntentFilter(el: XmlElement): IntentFilter {
  // Actions and categories are read by namespace and name string (ParsedIntentInfoUtils: getAttributeValue).
  const names = (tag: string) => childrenNamed(el, tag).map((c) => asString(namedAttr(c, ANDROID_NS, 'name')?.value)).filter((n): n is string => !!n);
  const data = childrenNamed(el, 'data');
  const values = (attr: string) => data.map((d) => asString(androidAttr(d, attr))).filter((n): n is string => !!n);
  return { actions: names('action'), categories: names('category'), schemes: values('scheme'), hosts: values('host') };
}

/** Resolves ".Foo" and "Foo" against the package, as the package manager does. */
export function qualify(name: string, packageName: string): string {
  if (name.startsWith('.')) return packageName + name;
  if (!name.includes('.') && packageName) return `${packageName}.${name}`;
  return name;
}

function sdkLevel(v: XmlValue | undefined): number | undefined {
  const n = asInt(v);
  if (n !== undefined) return n;
  // A preview codename (e.g. "VanillaIceCream") means "newer than any released level".
  const s = asString(v);
  return s && /^[A-Z]/.test(s) ? 10_000 : undefined;
}

function protectionLevel(v: XmlValue | undefined): string {
  if (!v) return 'normal';
  if (v.type === 'int') return PROTECTION_LEVELS[v.value & 0xf] ?? `0x${v.value.toString(16)}`;
  return asString(v) ?? 'normal';
}
