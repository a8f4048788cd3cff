import path from 'node:path';
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
import { buildManifestModel, hasRuleReferences, type ManifestModel } from './manifest-model';
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

export type AndroidResult = { findings: Finding[]; target: { name: string; version: string | null }; signing: AndroidSigning | null; inventory: ScanInventory };

/** Analyses an opened APK or AAB; throws UnreadablePackageError when its manifest cannot be read. */
export async function analyzeAndroid(zip: PackageZip, filePath: string, now: Date): Promise<AndroidResult> {
  const bundle = !zip.has(APK_MANIFEST) && zip.has(AAB_MANIFEST);
  if (!bundle && !zip.has(APK_MANIFEST)) {
    throw new UnreadablePackageError('missing-manifest', `neither ${APK_MANIFEST} (APK) nor ${AAB_MANIFEST} (App Bundle) is in the archive`);
  }
  const manifest = await readManifest(zip, bundle);
  const model = buildManifestModel(manifest, await readResources(zip, manifest, bundle));
  const debuggable = !!model.application && asBool(androidAttr(model.application, 'debuggable')) === true;
  const nsc = await readNetworkConfig(zip, model, bundle);
  const findings: Finding[] = [
    ...applicationFindings(model, nsc !== null || hasNscAttribute(model), now),
    ...componentFindings(model),
    ...permissionFindings(model),
    ...(nsc ? networkConfigFindings(nsc.root, nsc.source, debuggable) : []),
  ];
  const signature = await androidSignature(zip, filePath, model, bundle, now);
  findings.push(...signature.findings);
  // What the package holds: its native code, and the strings of its code, resources and assets.
  const native = await analyzeNativeLibraries(zip, filePath, { targetSdk: model.targetSdk, now, prefix: bundle ? 'base/' : '' });
  const contents = await scanAndroidContents(zip, { bundle });
  findings.push(...native.findings, ...contents.findings);
  const sdks = recogniseSdks({ javaPackages: contents.dexTypePackages, nativeLibraries: native.libraries.map((l) => l.path) });
  const inventory: ScanInventory = { nativeLibraries: native.libraries, permissions: model.requestedPermissions, sdks };
  return { findings, target: { name: model.packageName || path.basename(filePath), version: model.versionName }, signing: signature.signing, inventory };
}

async function readManifest(zip: PackageZip, bundle: boolean): Promise<XmlElement> {
  const name = bundle ? AAB_MANIFEST : APK_MANIFEST;
  const bytes = await zip.read(name, 'manifest');
  if (!bundle && !isBinaryXml(bytes)) {
    throw new UnreadablePackageError('corrupt-manifest', `${name} is not compiled binary XML${bytes.subarray(0, 5).toString('latin1') === '<?xml' ? ' (it is source XML: the archive was not built by aapt/aapt2)' : ''}`);
  }
  return bundle ? parseProtoXml(bytes) : parseBinaryXml(bytes);
}

function hasNscAttribute(m: ManifestModel): boolean {
  return !!m.application && androidAttr(m.application, 'networkSecurityConfig') !== undefined;
}

/**
 * Finds the network security config file: the path the reference resolved to through the resource table (so
 * shrunk/renamed resources are found), else the reference name or the conventional
 * res/xml/network_security_config.xml.
 */
async function readNetworkConfig(zip: PackageZip, m: ManifestModel, bundle: boolean): Promise<{ root: XmlElement; source: string } | null> {
  const ref = m.application ? androidAttr(m.application, 'networkSecurityConfig') : undefined;
  if (!ref) return null;
  const prefix = bundle ? 'base/' : '';
  const candidates: string[] = [];
  // The path the resource table names first (shrunk or renamed resources live elsewhere than their name says).
  if (ref.type === 'reference' && ref.resolved?.type === 'string') candidates.push(`${prefix}${ref.resolved.value}`);
  if (ref.type === 'reference' && ref.name) candidates.push(`${prefix}res/${ref.name.replace(/^@/, '')}.xml`);
  candidates.push(`${prefix}res/${CONVENTIONAL_NSC}`);
  const parse = (bytes: Buffer) => (bundle ? parseProtoXml(bytes) : parseBinaryXml(bytes));
  const source = candidates.find((c) => zip.has(c));
  if (source) return { root: parse(await zip.read(source, 'resourceXml')), source };
  // Unresolved reference (no resource table, or no such entry in it): the config is the xml resource whose root is <network-security-config>.
  const xmlResources = zip.names().filter((n) => n.startsWith(`${prefix}res/xml`)).slice(0, LIMITS.networkConfigCandidates);
  for (const name of xmlResources) {
    const root = parse(await zip.read(name, 'resourceXml'));
    if (root.name === 'network-security-config') return { root, source: name };
  }
  return null;
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
