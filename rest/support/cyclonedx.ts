import { createHash } from 'node:crypto';
import type { GetScanSbomQuery } from '../../src/generated/rest-operations';

type SbomScan = NonNullable<GetScanSbomQuery['scan']>;
type Inventory = NonNullable<SbomScan['inventory']>;
type Property = { name: string; value: string };

/** The tool named in every document's metadata; the version is the contract's (openapi/v1.yaml info.version). */
const TOOL = { type: 'application', name: 'shieldgate', group: 'shieldgate' } as const;

/**
 * A static scan's inventory as a CycloneDX 1.6 BOM (https://cyclonedx.org/docs/1.6/json/), the format
 * Dependency-Track and most SBOM tools import. The package is the metadata component; native libraries are `file`
 * components with their SHA-256 (Dependency-Track matches hashes); recognised SDKs are `library` components whose
 * identity evidence says how they were recognised (CycloneDX's `evidence.identity`, technique `binary-analysis`).
 * Permissions are properties of the package: CycloneDX has no field for them. The serial number is derived from
 * the scan id, so the same scan always gives the same document.
 */
export function cycloneDx(scan: SbomScan & { inventory: Inventory }, apiVersion: string): object {
  const app = 'package';
  const libraries = scan.inventory.nativeLibraries.map((lib) => ({
    type: 'file',
    'bom-ref': `file:${lib.abi}:${lib.path}`,
    name: lib.path,
    hashes: [{ alg: 'SHA-256', content: lib.sha256 }],
    properties: [{ name: 'shieldgate:abi', value: lib.abi }],
  }));
  const sdks = scan.inventory.sdks.map((sdk) => ({
    type: 'library',
    'bom-ref': `sdk:${sdk.name}`,
    name: sdk.name,
    evidence: { identity: [{ field: 'name', confidence: 0.8, methods: [{ technique: 'binary-analysis', confidence: 0.8, value: sdk.evidence }] }] },
  }));
  const properties: Property[] = [
    { name: 'shieldgate:scan:id', value: scan.id },
    { name: 'shieldgate:platform', value: scan.target.platform },
    ...scan.inventory.permissions.map((p) => ({ name: 'shieldgate:android:permission', value: p })),
  ];
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: serialNumber(scan.id),
    version: 1,
    metadata: {
      timestamp: new Date(scan.createdAt).toISOString(),
      tools: { components: [{ ...TOOL, version: apiVersion }] },
      component: { type: 'application', 'bom-ref': app, name: scan.target.name, ...(scan.target.version ? { version: scan.target.version } : {}), properties },
    },
    components: [...libraries, ...sdks],
    dependencies: [{ ref: app, dependsOn: [...libraries, ...sdks].map((c) => c['bom-ref']) }],
  };
}

/** An RFC 4122 name-based (version 5 layout) UUID from the scan id: stable for a scan, unique across scans. */
function serialNumber(scanId: string): string {
  const b = createHash('sha1').update(`shieldgate-scan:${scanId}`).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
