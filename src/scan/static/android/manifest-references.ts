/**
 * Resource references in the manifest's rule attributes, judged over every configuration (docs/scan-evidence.md,
 * "Manifest attributes given as resource references, in every configuration"). `android:debuggable="@bool/dbg"` may
 * be false in values/ and true in values-v26/: a device of API 26 or later reads true. No device is at hand to pick one configuration, and
 * Android ignores maxSdkVersion when installing, so every configuration the table holds is one some device selects:
 * a flag is judged by its worst value, a file reference reads every configuration's file, and any other rule
 * attribute whose value differs between configurations makes the package unreadable rather than guessed.
 */
import { UnreadablePackageError } from '../package/errors';
import { ANDROID_ATTR_IDS, asBool, showValue, type XmlElement, type XmlValue } from '../package/xml-node';
import type { ResourceResolver } from './resource-table';

/** Flags whose `true` is the risky reading: true in any configuration is judged true. */
const WORST_IS_TRUE: ReadonlySet<string> = new Set(['debuggable', 'allowBackup', 'usesCleartextTraffic', 'exported', 'testOnly', 'grantUriPermissions']);
/** References to res/xml files: every configuration's file is read (`alternatives`). */
export const FILE_REFERENCES: ReadonlySet<string> = new Set(['networkSecurityConfig', 'fullBackupContent', 'dataExtractionRules']);
/** Shown in a scan's target, never judged: the default configuration's value is shown. */
const SHOWN_ONLY: ReadonlySet<string> = new Set(['versionName']);

/** The framework attribute a rule reads, by resource id (the only way Android matches it), or undefined. */
export function ruleAttribute(a: XmlElement['attributes'][number]): string | undefined {
  return a.resourceId === null ? undefined : ANDROID_ATTR_IDS.get(a.resourceId);
}

/** True when the manifest has a resource reference in an attribute the rules read, i.e. the table is needed. */
export function hasRuleReferences(root: XmlElement): boolean {
  return walk(root).some((el) => el.attributes.some((a) => ruleAttribute(a) !== undefined && a.value.type === 'reference'));
}

/** Resolves, in place, every reference of a rule attribute to the value the rules judge. */
export function resolveReferences(root: XmlElement, resolver: ResourceResolver): void {
  for (const el of walk(root)) {
    for (const a of el.attributes) {
      const attr = ruleAttribute(a);
      if (attr === undefined || a.value.type !== 'reference' || a.value.resolved !== undefined) continue;
      const { name, values } = resolver.resolve(a.value.id);
      a.value.name ??= name;
      a.value.alternatives = values.filter((v): v is XmlValue => v !== null);
      a.value.resolved = judged(el, attr, a.value.name, values);
    }
  }
}

function judged(el: XmlElement, attr: string, resource: string | null, values: Array<XmlValue | null>): XmlValue | null {
  if (values.length <= 1 || SHOWN_ONLY.has(attr) || FILE_REFERENCES.has(attr)) return values[0] ?? null;
  if (WORST_IS_TRUE.has(attr)) {
    const read = values.map((v) => (v === null ? undefined : asBool(v)));
    if (read.includes(true)) return { type: 'bool', value: true };
    return read.every((b) => b === false) ? { type: 'bool', value: false } : null;
  }
  const shown = values.map((v) => (v === null ? '(unreadable)' : showValue(v)));
  throw new UnreadablePackageError(
    'corrupt-manifest',
    `<${el.name} android:${attr}="@${resource ?? 'resource'}"> has different values in different resource configurations (${shown.slice(0, 4).join(', ')}), so devices read different manifests`,
  );
}

/** Every element of the tree, without recursion (depth is capped by the XML parsers, but a stack is not needed). */
export function walk(root: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  for (const stack = [root]; stack.length; ) {
    const el = stack.pop() as XmlElement;
    out.push(el);
    for (const c of el.children) stack.push(c);
  }
  return out;
}
