import { androidAttr, asBool, asInt, asString, childrenNamed, plainAttr, type XmlElement, type XmlValue } from '../xml-node';

export type ComponentKind = 'activity' | 'activity-alias' | 'service' | 'receiver' | 'provider';

export type IntentFilter = { actions: string[]; categories: string[]; schemes: string[]; hosts: string[] };

export type Component = {
  kind: ComponentKind;
  /** Fully qualified class name (".Main" resolved against the package). */
  name: string;
  /** The declared android:exported, undefined when absent. */
  exportedAttr: boolean | undefined;
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
  /** Declared minSdkVersion, or 1 when absent (the platform default). */
  minSdk: number;
  /** Declared targetSdkVersion, or minSdk when absent (the platform default). */
  targetSdk: number;
  application: XmlElement | null;
  components: Component[];
  /** Custom permissions this package defines: name -> protectionLevel as written (e.g. "normal", "signature"). */
  definedPermissions: Map<string, string>;
};

const COMPONENT_KINDS: readonly ComponentKind[] = ['activity', 'activity-alias', 'service', 'receiver', 'provider'];
// android:protectionLevel flag values (R.attr.protectionLevel): base levels in the low 4 bits.
const PROTECTION_LEVELS = ['normal', 'dangerous', 'signature', 'signatureOrSystem'];

export function buildManifestModel(root: XmlElement): ManifestModel {
  const packageName = asString(plainAttr(root, 'package')) ?? '';
  const usesSdk = childrenNamed(root, 'uses-sdk')[0];
  const minSdk = sdkLevel(usesSdk && androidAttr(usesSdk, 'minSdkVersion')) ?? 1;
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
  return { packageName, versionName: asString(androidAttr(root, 'versionName')) ?? null, minSdk, targetSdk, application, components, definedPermissions };
}

function toComponent(el: XmlElement, packageName: string): Component {
  // An activity-alias is exported/protected like an activity; its own name is what other apps address.
  return {
    kind: el.name as ComponentKind,
    name: qualify(asString(androidAttr(el, 'name')) ?? '(unnamed)', packageName),
    exportedAttr: asBool(androidAttr(el, 'exported')),
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
  const names = (tag: string) => childrenNamed(el, tag).map((c) => asString(androidAttr(c, 'name'))).filter((n): n is string => !!n);
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
