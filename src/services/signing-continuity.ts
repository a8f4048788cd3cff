/**
 * Signing continuity (docs/scan-evidence.md): the first verified static scan of a package records who signed it; a
 * later verified package signed otherwise is a critical finding, unless a v3 lineage proves the rotation from the
 * recorded signer (a low finding, and the record moves). An iOS team is identified only through Apple's chain, and
 * its leaf's key is pinned: a new key of the same team is a low finding, and a release build pins it. Unverified
 * signatures never record nor move anything: an attacker's broken package must not become the reference. Nor do
 * builds that are not release builds (src/services/builds/release.ts): a branch job is compared with the release's
 * record, and never writes it.
 */
import type { RequestContext } from './context';
import type { ContinuityVerdict, SignerDoc, SignerFields, SignerKey } from '../data/signers-repo';
import type { Finding } from '../scan';
import type { AndroidSigning, IosSigning, ScanSigning } from '../scan/model/types';

/** What a package's signature identifies, as recorded and compared. */
export type ObservedSigner = Pick<SignerDoc, 'identity' | 'sha256' | 'teamId' | 'keySha256'>;

const isAndroid = (s: ScanSigning): s is AndroidSigning => 'schemes' in s;

/** The identity a verified signature proves; null when it proves none (unverified, or no signer at all). */
export function observedSigner(signing: ScanSigning | null | undefined): ObservedSigner | null {
  if (!signing?.verified || signing.signers.length === 0) return null;
  if (isAndroid(signing)) {
    // Android installs an update only when its signer set equals the installed one: every signer counts.
    const all = [...new Set(signing.signers.map((s) => s.sha256.toLowerCase()))].sort();
    return { identity: all.join(' '), sha256: signing.signers[0].sha256.toLowerCase(), teamId: null };
  }
  const leaf = signing.signers[0].sha256.toLowerCase();
  // A team is an identity only when the analyser proved it from Apple's chain, which is when it gives the leaf's key:
  // a team id without one (a scan stored before the chain was checked) is the signer's own claim.
  const keySha256 = signing.keySha256?.toLowerCase();
  if (signing.teamId && keySha256) return { identity: `team:${signing.teamId}`, sha256: leaf, teamId: signing.teamId, keySha256 };
  return { identity: `leaf:${leaf}`, sha256: leaf, teamId: null };
}

/** The identity of an operator's record: the same keys a scan's record has (a team's, with no key pinned). */
export function operatorSigner(input: { sha256: string | null; teamId: string | null }): ObservedSigner {
  if (input.teamId) return { identity: `team:${input.teamId}`, sha256: input.sha256, teamId: input.teamId, keySha256: null };
  const sha256 = (input.sha256 ?? '').toLowerCase();
  return { identity: sha256, sha256, teamId: null };
}

/** True when the package's v3 lineage proves a rotation from the recorded (single) signer to the package's signer. */
function rotationProven(signing: ScanSigning, recorded: SignerDoc, observed: ObservedSigner): boolean {
  if (!isAndroid(signing) || recorded.platform !== 'android' || signing.signers.length !== 1) return false;
  if (!recorded.sha256 || recorded.identity !== recorded.sha256 || observed.identity !== observed.sha256) return false;
  const lineage = signing.lineage.map((s) => s.toLowerCase());
  const from = lineage.indexOf(recorded.sha256);
  return from >= 0 && from < lineage.length - 1 && lineage[lineage.length - 1] === observed.sha256;
}

export interface ContinuityInput extends SignerKey {
  scanId: string;
  signing: ScanSigning | null;
  /** Whether the scanned build is a release build: only those record or move the package's signer. */
  release: boolean;
}

/** The findings to add to the scan, and the verdict the scan states. */
export type ContinuityResult = { findings: Finding[]; verdict: ContinuityVerdict };

/** How many compare-and-set rounds a scan tries when others move the record under it (each loss means progress). */
const MAX_ROUNDS = 3;

/**
 * Checks the package's signer against the recorded one, records or moves it, and returns the findings to add to the
 * scan (before it is scored). A retried job meets its own earlier record (same scan id) and reports the same.
 */
export async function checkSigningContinuity(ctx: RequestContext, input: ContinuityInput): Promise<ContinuityResult> {
  const observed = observedSigner(input.signing);
  if (!observed || !input.signing || !input.package) return { findings: [], verdict: 'unverified' };
  const key: SignerKey = { appId: input.appId, platform: input.platform, package: input.package };
  const fields = (rotatedFrom: string | null): SignerFields => ({
    ...observed, source: 'scan', scanId: input.scanId, reason: null, rotatedFrom, recordedAt: ctx.clock.now(),
  });
  if (!input.release) return compareWithRecord(ctx, key, input, input.signing, observed);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Insert first, never find-then-insert: the unique key lets exactly one of concurrent first scans record.
    if (await ctx.repos.signers.insertFirst(key, fields(null))) return { findings: [], verdict: 'recorded' };
    const recorded = await ctx.repos.signers.find(key);
    if (!recorded) continue; // removed in between: try to record again
    if (recorded.scanId === input.scanId) {
      return recorded.rotatedFrom ? moved(input, recorded.rotatedFrom, observed) : { findings: [], verdict: 'recorded' };
    }
    if (recorded.identity === observed.identity) {
      const pinned = renewedFrom(recorded, observed);
      if (!pinned) return { findings: [], verdict: 'unchanged' };
      // The team's new key (a renewed certificate) is pinned in place of the one read, compare-and-set on it.
      if (await ctx.repos.signers.moveIfUnchanged(key, recorded.identity, fields(recorded.sha256), pinned)) return moved(input, recorded.sha256, observed);
      continue;
    }
    if (!rotationProven(input.signing, recorded, observed)) return { findings: [changedFinding(input, recorded, observed)], verdict: 'changed' };
    if (await ctx.repos.signers.moveIfUnchanged(key, recorded.identity, fields(recorded.sha256))) {
      return { findings: [rotatedFinding(input.package, recorded.sha256!, observed)], verdict: 'rotated' };
    }
    // Another scan moved it first: compare with what it recorded.
  }
  throw new Error(`the signer record of ${input.package} kept changing during the scan`);
}

/**
 * A build that is not a release build is compared with the package's record and never writes it: without a record
 * it gets no verdict (`unrecorded`), so a branch job cannot claim a package's first signer and block the release. A
 * lineage proving the rotation from the record is no change, but only a release build moves the record.
 */
async function compareWithRecord(ctx: RequestContext, key: SignerKey, input: ContinuityInput, signing: ScanSigning, observed: ObservedSigner): Promise<ContinuityResult> {
  const recorded = await ctx.repos.signers.find(key);
  if (!recorded) return { findings: [], verdict: 'unrecorded' };
  if (recorded.identity === observed.identity) {
    return { findings: renewedFrom(recorded, observed) ? [renewedFinding(input.package, recorded.sha256, observed)] : [], verdict: 'unchanged' };
  }
  if (rotationProven(signing, recorded, observed)) return { findings: [], verdict: 'rotated' };
  return { findings: [changedFinding(input, recorded, observed)], verdict: 'changed' };
}

/**
 * The pinned key an iOS package of the recorded team no longer uses, or null (the same key, or none pinned: an
 * operator's record names the team only). A new key of the team is normal (a renewed certificate), not a change.
 */
function renewedFrom(recorded: SignerDoc, observed: ObservedSigner): string | null {
  return recorded.keySha256 && observed.keySha256 && recorded.keySha256 !== observed.keySha256 ? recorded.keySha256 : null;
}

/** What a scan that moved the record reports (again, when its job is retried): a proven rotation, or a team's new key. */
function moved(input: ContinuityInput, from: string | null, observed: ObservedSigner): ContinuityResult {
  if (input.platform === 'ios') return { findings: [renewedFinding(input.package, from, observed)], verdict: 'unchanged' };
  return { findings: [rotatedFinding(input.package, from!, observed)], verdict: 'rotated' };
}

/** A digest short enough to read, long enough (64 bits) not to be mistaken for another. */
export const abbreviated = (sha256: string | null) => (sha256 ? `${sha256.slice(0, 16)}…` : 'none');

function recordedFrom(recorded: SignerDoc): string {
  const day = recorded.recordedAt.toISOString().slice(0, 10);
  return recorded.source === 'operator' ? `recorded by an operator on ${day}` : `recorded from scan ${recorded.scanId} on ${day}`;
}

function changedFinding(input: ContinuityInput, recorded: SignerDoc, observed: ObservedSigner): Finding {
  const deliberate = `If the change is deliberate, record the new signer with POST /v1/apps/${input.appId}/signers`;
  if (input.platform === 'ios') {
    const was = recorded.teamId ? `team ${recorded.teamId}` : `certificate ${abbreviated(recorded.sha256)}`;
    const now = observed.teamId ? `team ${observed.teamId}` : `certificate ${abbreviated(observed.sha256)}`;
    return {
      id: 'ios.team-changed',
      severity: 'critical',
      title: 'Signed by another team than earlier builds',
      detail: `Earlier verified builds of ${input.package} were signed by ${was} (${recordedFrom(recorded)}); this package is signed by ${now} (certificate ${abbreviated(observed.sha256)}). A bundle re-signed by another team is how repackaged apps look.`,
      fix: `Do not release this package until you know who signed it. ${deliberate} ({ "package": "${input.package}", "teamId": "<new team id>", "reason": "…" }); the full certificate digest is in this scan's signing.`,
    };
  }
  return {
    id: 'android.signer-changed',
    severity: 'critical',
    title: 'Signed by another certificate than earlier builds',
    detail: `Earlier verified builds of ${input.package} were signed by certificate SHA-256 ${abbreviated(recorded.sha256)} (${recordedFrom(recorded)}); this package is signed by ${abbreviated(observed.sha256)}, and no v3 lineage proves a rotation from the first. A package re-signed with another key is how repackaged or hijacked apps look, and Android refuses it as an update of the installed app.`,
    fix: `Do not release this package until you know who signed it. To change keys, rotate with APK Signature Scheme v3 (\`apksigner rotate --out lineage --old-signer --ks old.jks --new-signer --ks new.jks\`, then sign with \`--lineage lineage\`). ${deliberate} ({ "package": "${input.package}", "sha256": "<new certificate sha256>", "reason": "…" }); the full digest is in this scan's signing.`,
  };
}

function rotatedFinding(pkg: string, from: string, observed: ObservedSigner): Finding {
  return {
    id: 'android.signer-rotated',
    severity: 'low',
    title: 'Signing key rotated (proven by a v3 lineage)',
    detail: `The package ${pkg} is signed by certificate SHA-256 ${abbreviated(observed.sha256)}, and its APK Signature Scheme v3 lineage proves the rotation from the recorded ${abbreviated(from)}. The recorded signer of ${pkg} is now ${abbreviated(observed.sha256)}.`,
    fix: 'Nothing to do if you rotated the key. If you did not, find out who holds the old key: only its holder can sign a lineage from it.',
  };
}

function renewedFinding(pkg: string, fromLeaf: string | null, observed: ObservedSigner): Finding {
  return {
    id: 'ios.signing-key-renewed',
    severity: 'low',
    title: 'Signed with a new certificate key of the same team',
    detail: `The package ${pkg} is signed by team ${observed.teamId}, as recorded, with a certificate Apple issued (${abbreviated(observed.sha256)}) whose key differs from the one pinned from the recorded certificate ${abbreviated(fromLeaf)}: a renewed or additional Apple Development or Distribution certificate of the team. A release build's scan pins the new key.`,
    fix: 'Nothing to do if your team renewed or added a signing certificate. If it did not, find out who requested it, and revoke the certificates you do not know in the Apple Developer portal (Certificates, Identifiers & Profiles).',
  };
}

/**
 * Adds continuity findings to the analyser's, keeping at most `max`: the least severe of the others go first, so a
 * critical signer change is never cut to make room.
 */
export function withFindings(findings: Finding[], extra: Finding[], max: number): Finding[] {
  const order: Finding['severity'][] = ['critical', 'high', 'medium', 'low'];
  const all = [...findings, ...extra];
  if (all.length <= max) return all;
  const ranked = all.map((f, i) => ({ f, i })).sort((a, b) => order.indexOf(a.f.severity) - order.indexOf(b.f.severity) || (a.i >= findings.length ? -1 : 0) - (b.i >= findings.length ? -1 : 0) || a.i - b.i);
  const kept = new Set(ranked.slice(0, max).map((r) => r.i));
  return all.filter((_f, i) => kept.has(i));
}
