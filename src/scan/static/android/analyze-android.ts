import type { AndroidSigning, Finding, ScanInventory } from '../../model/types';
import { recogniseSdks } from '../catalog/sdk-catalog';
import { analyzeNativeLibraries, nativeLibraryAbi } from '../native/native-libraries';
import { isAndroidSecretEntry, scanAndroidContents } from './android-contents';
import { UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { androidAttr, asBool, type XmlElement } from '../package/xml-node';
import { applicationFindings } from './app-rules';
import { isBinaryXml, parseBinaryXml } from './binary-xml';
import { componentFindings } from './component-rules';
import { buildManifestModel, type ManifestModel } from './manifest-model';
import { hasRuleReferences } from './manifest-references';
import { networkConfigFindings } from './network-config-rules';
import { permissionFindings } from './permission-rules';
import { parseProtoXml } from './proto-xml';
import { ProtoResourceTable } from './proto-resource-table';
import { ResourceTable, type ResourceResolver } from './resource-table';
import { androidSignature, isSignatureEntry } from './android-signature';

export const APK_MANIFEST = 'AndroidManifest.xml';
export const AAB_MANIFEST = 'base/manifest/AndroidManifest.xml';
const APK_RESOURCES = 'resources.arsc';
const AAB_RESOURCES = 'base/resources.pb';
const CONVENTIONAL_NSC = 'xml/network_security_config.xml';

/** Entries the Android analysis may read; everything else in the package is never touched. */
export function isAndroidEntry(name: string): boolean {
  return name === APK_MANIFEST || name === AAB_MANIFEST || name === APK_RESOURCES || name === AAB_RESOURCES ||
    (/^(base\/)?res\/.+\.xml$/.test(name)) || isSignatureEntry(name) ||
    nativeLibraryAbi(name) !== null || nativeLibraryAbi(name, 'base/') !== null || isAndroidSecretEntry(name);
}

export type AndroidResult = { findings: Finding[]; target: { name: string; version: string | null; versionCode: number | null }; signing: AndroidSigning | null; inventory: ScanInventory };

/** Analyses an opened APK or AAB; throws UnreadablePackageError when its manifest cannot be read. */
export async function analyzeAndroid(zip: PackageZip, filePath: string, now: Date, onTarget?: (target: AndroidResult['target']) => void): Promise<AndroidResult> {
  const bundle = !zip.has(APK_MANIFEST) && zip.has(AAB_MANIFEST);
  if (!bundle && !zip.has(APK_MANIFEST)) {
    throw new UnreadablePackageError('missing-manifest', `neither ${APK_MANIFEST} (APK) nor ${AAB_MANIFEST} (App Bundle) is in the archive`);
  }
  const manifest = await readManifest(zip, bundle);
  const model = buildManifestModel(manifest, await readResources(zip, manifest, bundle), !bundle);
  const target = { name: model.packageName, version: model.versionName, versionCode: model.versionCode };
  onTarget?.(target);
  const debuggable = !!model.application && asBool(androidAttr(model.application, 'debuggable')) === true;
  const configs = await readNetworkConfigs(zip, model, bundle);
  const findings: Finding[] = [
    // Only a config file the platform would load overrides usesCleartextTraffic.
    ...applicationFindings(model, configs.length > 0, now),
    ...componentFindings(model),
    ...permissionFindings(model),
    ...configs.flatMap((nsc) => networkConfigFindings(nsc.root, nsc.source, debuggable)),
  ];
  const signature = await androidSignature(zip, filePath, model, bundle, now);
  findings.push(...signature.findings);
  // What the package holds: its native code, and the strings of its code, resources and assets.
  const native = await analyzeNativeLibraries(zip, filePath, { targetSdk: model.targetSdk, now, prefix: bundle ? 'base/' : '' });
  const contents = await scanAndroidContents(zip, { bundle });
  findings.push(...native.findings, ...contents.findings);
  const sdks = recogniseSdks({ javaPackages: contents.dexTypePackages, nativeLibraries: native.libraries.map((l) => l.path) });
  const inventory: ScanInventory = { nativeLibraries: native.libraries, permissions: model.requestedPermissions, sdks };
  return { findings, target, signing: signature.signing, inventory };
}

async function readManifest(zip: PackageZip, bundle: boolean): Promise<XmlElement> {
  const name = bundle ? AAB_MANIFEST : APK_MANIFEST;
  const bytes = await zip.read(name, 'manifest');
  if (!bundle && !isBinaryXml(bytes)) {
    throw new UnreadablePackageError('corrupt-manifest', `${name} is not compiled binary XML${bytes.subarray(0, 5).toString('latin1') === '<?xml' ? ' (it is source XML: the archive was not built by aapt/aapt2)' : ''}`);
  }
  return bundle ? parseProtoXml(bytes) : parseBinaryXml(bytes);
}

/**
 * The network security config files a device may load: Android reads android:networkSecurityConfig as a resource
 * id (a string or an unmapped attribute is ignored), and each configuration of that resource (res/xml/,
 * res/xml-v24/, ...) names a file some device loads, so every one is read. Without a resource table, the reference's
 * name or the conventional res/xml/network_security_config.xml; failing those, the xml resource whose root is
 * <network-security-config>.
 */
async function readNetworkConfigs(zip: PackageZip, m: ManifestModel, bundle: boolean): Promise<Array<{ root: XmlElement; source: string }>> {
  const ref = m.application ? androidAttr(m.application, 'networkSecurityConfig') : undefined;
  if (ref?.type !== 'reference') return [];
  const prefix = bundle ? 'base/' : '';
  const parse = (bytes: Buffer) => (bundle ? parseProtoXml(bytes) : parseBinaryXml(bytes));
  const files = (ref.alternatives ?? []).filter((v) => v.type === 'string').map((v) => `${prefix}${v.value}`).filter((f) => zip.has(f));
  if (files.length > 0) {
    const configs = [];
    for (const source of [...new Set(files)].slice(0, LIMITS.networkConfigCandidates)) configs.push({ root: parse(await zip.read(source, 'resourceXml')), source });
    return configs;
  }
  const candidates: string[] = [];
  if (ref.name) candidates.push(`${prefix}res/${ref.name.replace(/^@/, '')}.xml`);
  candidates.push(`${prefix}res/${CONVENTIONAL_NSC}`);
  const source = candidates.find((c) => zip.has(c));
  if (source) return [{ root: parse(await zip.read(source, 'resourceXml')), source }];
  // Unresolved reference (no resource table, or no such entry in it): the config is the xml resource whose root is <network-security-config>.
  const xmlResources = zip.names().filter((n) => n.startsWith(`${prefix}res/xml`)).slice(0, LIMITS.networkConfigCandidates);
  for (const name of xmlResources) {
    const root = parse(await zip.read(name, 'resourceXml'));
    if (root.name === 'network-security-config') return [{ root, source: name }];
  }
  return [];
}

/**
 * The package's resource table (resources.arsc in an APK, the base module's resources.pb in a bundle), read only
 * when the manifest has a resource reference a rule needs (most manifests have none). A malformed table makes the
 * package unreadable, as it does for the platform's package parser; a package without one keeps its references
 * unresolved.
 */
async function readResources(zip: PackageZip, manifest: XmlElement, bundle: boolean): Promise<ResourceResolver | null> {
  const name = bundle ? AAB_RESOURCES : APK_RESOURCES;
  if (!zip.has(name) || !hasRuleReferences(manifest)) return null;
  const bytes = await zip.read(name, 'resourceTable');
  return bundle ? new ProtoResourceTable(bytes) : new ResourceTable(bytes);
}
