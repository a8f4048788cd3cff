// The two verdicts the APK differential tests compare: verifyApk's and apksig's (tools/apksig-oracle), per file.
import { verifyApk } from '../../src/scan/static/signing/apk-verifier';
import { apksigVerify, describeApksigVerdict } from './apksig-oracle';

export type VerdictMutant = { label: string; file: string; minSdk?: number };
export type VerdictRow = { mutant: string; verified: boolean; apksig: boolean; why: string };

/**
 * Each file verified by verifyApk (minSdk the mutant's, 21 by default; a throw is not verified: a malformed archive
 * verifies nothing) and by apksig, all in one JVM, with the same minSdk, or with the one apksig reads from the
 * manifest when `apksigReadsMinSdk`.
 */
export async function verdictRows(mutants: VerdictMutant[], { apksigReadsMinSdk = false } = {}): Promise<VerdictRow[]> {
  const verdicts = await apksigVerify(mutants.map((m) => ({ file: m.file, minSdk: apksigReadsMinSdk ? undefined : (m.minSdk ?? 21) })));
  const rows: VerdictRow[] = [];
  for (const [i, m] of mutants.entries()) {
    let ours: boolean;
    try {
      ours = (await verifyApk(m.file, { minSdk: m.minSdk ?? 21, targetSdk: 29 })).verified;
    } catch {
      ours = false;
    }
    rows.push({ mutant: m.label, verified: ours, apksig: verdicts[i].verified, why: describeApksigVerdict(verdicts[i]) });
  }
  return rows;
}
