import type { RestHandler } from '../handler';
import { notFound } from '../../src/core/errors';
import { execute } from '../support/execute';
import type { components } from '../../src/generated/openapi';
import { GetScanDocument, GetScanSbomDocument, type GetScanQuery } from '../../src/generated/rest-operations';
import { API_VERSION } from '../../src/http/request-context';
import { cycloneDx } from '../support/cyclonedx';

type RestScan = components['schemas']['Scan'];
type RestAndroidSigning = components['schemas']['AndroidSigning'];

/** The GraphQL union to the REST shape: the same fields, without the type name (the target's platform tells). */
function restSigning(signing: NonNullable<GetScanQuery['scan']>['signing']): RestScan['signing'] {
  if (!signing) return null;
  if (signing.__typename === 'AndroidSigning') {
    const { __typename: _type, ...android } = signing;
    // The analyser names only the schemes apksigner verifies (src/scan/types.ts); the contract lists them.
    return { ...android, schemes: android.schemes as RestAndroidSigning['schemes'] };
  }
  const { __typename: _type, ...ios } = signing;
  return ios;
}

export const getScan: RestHandler<'getScan'> = async (call, ctx) => {
  const { scan } = await execute(ctx, GetScanDocument, { id: call.params.id });
  if (!scan) throw notFound('Scan');
  const body: RestScan = {
    ...scan,
    target: { ...scan.target, version: scan.target.version ?? null },
    // Scans stored before fingerprints existed answer null: they were never compared.
    findings: scan.findings.map((f) => ({
      ...f,
      fingerprint: f.fingerprint ?? null,
      status: f.status ?? null,
      suppressed: f.suppressed ? { ...f.suppressed, expiresAt: new Date(f.suppressed.expiresAt).toISOString() } : null,
    })),
    baseline: scan.baseline ?? null,
    diff: scan.diff ?? null,
    signing: restSigning(scan.signing),
    signerContinuity: scan.signerContinuity ?? null,
    inventory: scan.inventory ?? null,
    createdAt: new Date(scan.createdAt).toISOString(),
  };
  call.answer(200, body);
};

/** The inventory as CycloneDX; a scan without one (a preview, a package not analysed) has no SBOM to give. */
export const getScanSbom: RestHandler<'getScanSbom'> = async (call, ctx) => {
  const { scan } = await execute(ctx, GetScanSbomDocument, { id: call.params.id });
  if (!scan) throw notFound('Scan');
  if (!scan.inventory) throw notFound('SBOM');
  call.res.status(200).type('application/vnd.cyclonedx+json').send(JSON.stringify(cycloneDx({ ...scan, inventory: scan.inventory }, API_VERSION)));
};
