import type { Finding, IosSigning } from '../../model/types';
import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import { checkSignerChain, type TrustAnchors } from './apple-chain';
import { certificateTeamId, checkCms, describeCertificate, type CmsCheck } from './cms-signer';
import { cdHashesOf, checkExecutable, type ExecutableSignature } from './code-seal';
import { parsePlistDict, stringAt } from './read-plist';
import { checkResourceSeal, type NestedChecks } from './resource-seal';
import { addProblem, newReport, type SealReport } from './seal-report';

/** CPU type of arm64 (CPU_TYPE_ARM | CPU_ARCH_ABI64): its slice names the signer of a fat executable. */
const CPU_ARM64 = 0x0100000c;
/** Problems quoted in the finding; the rest are counted. */
const QUOTED = 5;
const QUOTED_CHARS = 160;

type Checked = { exe: ExecutableSignature | 'unsigned' | null; codeResources: Buffer | null; cms: Array<CmsCheck | null> };

/** What the signer's chain is checked against: the scan's time, and the anchors (Apple's, apple-roots.ts, unless a test names others). */
export type SignerTrust = { now: Date; anchors?: TrustAnchors };

/**
 * The seal of an app bundle, checked as codesign --verify --deep checks it: the resources against CodeResources, the
 * main executable's code signature against its code, Info.plist and CodeResources, the CMS signature over its
 * CodeDirectory, and nested bundles and code likewise; then whether the signer's certificate chains to Apple. Returns
 * the findings (`ios.unsigned` when there is no signature at all, else a critical `ios.seal-broken` listing the
 * first problems and a critical `ios.signer-untrusted` when Apple did not issue the signer's certificate) and the
 * signing identity (null only for an unsigned bundle).
 */
export async function checkIosSeal(
  zip: PackageZip, appDir: string, executable: string, infoPlist: Buffer, trust: SignerTrust,
): Promise<{ findings: Finding[]; signing: IosSigning | null }> {
  const report = newReport();
  const checked = await checkBundle(zip, appDir, executable, infoPlist, report, 0);
  if (!checked) return { findings: [unsignedFinding(appDir)], signing: null };
  const { signing, untrusted } = signerOf(checked, appDir + executable, report, trust);
  signing.verified = signing.verified && report.total === 0;
  return { findings: [...(report.total ? [sealBrokenFinding(report)] : []), ...(untrusted ? [untrusted] : [])], signing };
}

/** Checks one bundle (the app, or a bundle nested in it); null when it carries no signature at all. */
async function checkBundle(zip: PackageZip, appDir: string, executable: string, infoPlist: Buffer, report: SealReport, depth: number): Promise<Checked | null> {
  const crName = `${appDir}_CodeSignature/CodeResources`;
  const codeResources = zip.has(crName) ? await zip.read(crName, 'plist') : null;
  const exeName = appDir + executable;
  let exe: Checked['exe'] = 'unsigned';
  if (zip.has(exeName)) exe = await checkExecutable(zip, exeName, { infoPlist, codeResources }, report);
  if (!codeResources && exe === 'unsigned') return null;
  if (!zip.has(exeName)) addProblem(report, `${exeName}: main executable (CFBundleExecutable) is missing`);
  if (codeResources) await checkResourceSeal(zip, appDir, executable, codeResources, report, nestedChecks(zip, report, depth + 1));
  else addProblem(report, `${crName}: missing, so the bundle's resources are not sealed`);
  const cms = exe && exe !== 'unsigned' ? exe.slices.map((s) => (s.signature.cms ? checkCms(s.signature.cms, s.signature, s.cd) : null)) : [];
  for (const check of cms) if (check?.problem) addProblem(report, `${exeName}: ${check.problem}`);
  return { exe, codeResources, cms };
}

/** Nested bundles and code are verified whole, then matched with the cdhash the outer seal recorded. */
function nestedChecks(zip: PackageZip, report: SealReport, depth: number): NestedChecks {
  const matches = (exe: Checked['exe'], cdhash: Buffer) =>
    !!exe && exe !== 'unsigned' && cdHashesOf(exe).some((h) => h.subarray(0, cdhash.length).equals(cdhash));
  return {
    async bundle(dir, cdhash) {
      if (depth > LIMITS.sealNesting) throw new LimitExceededError('sealNesting', `bundles nest over ${LIMITS.sealNesting} deep`);
      const infoName = `${dir}Info.plist`;
      if (!zip.has(infoName)) return 'nested bundle has no Info.plist';
      let info: Buffer;
      let executable: string | undefined;
      try {
        info = await zip.read(infoName, 'plist');
        executable = stringAt(parsePlistDict(info, infoName), 'CFBundleExecutable');
      } catch (err) {
        if (err instanceof UnreadablePackageError) return 'nested bundle\'s Info.plist is unreadable';
        throw err;
      }
      if (!executable || executable.includes('/')) return 'nested bundle names no executable';
      const checked = await checkBundle(zip, dir, executable, info, report, depth);
      if (!checked || checked.exe === 'unsigned') return 'nested bundle is not signed';
      return matches(checked.exe, cdhash) ? null : 'nested bundle was re-signed or changed (cdhash differs from the seal)';
    },
    async code(name, cdhash) {
      const exe = await checkExecutable(zip, name, { infoPlist: null, codeResources: null }, report);
      if (exe === 'unsigned') return 'nested code is not signed';
      if (exe) for (const s of exe.slices) {
        const problem = s.signature.cms ? checkCms(s.signature.cms, s.signature, s.cd).problem : null;
        if (problem) addProblem(report, `${name}: ${problem}`);
      }
      return matches(exe, cdhash) ? null : 'nested code was re-signed or changed (cdhash differs from the seal)';
    },
  };
}

/**
 * Who signed: the CMS of the arm64 slice (else the first), its signer first. The team is the signer certificate's
 * OU, and only when that certificate chains to Apple (apple-chain.ts): anyone can write a team's OU into a
 * certificate of their own, and a CodeDirectory's team id is the signer's own claim too. A signer of any slice
 * that verifies but does not chain to Apple makes the signing unverified and gives `ios.signer-untrusted`.
 */
function signerOf(checked: Checked, exeName: string, report: SealReport, trust: SignerTrust): { signing: IosSigning; untrusted: Finding | null } {
  const { exe, cms } = checked;
  if (!exe || exe === 'unsigned') return { signing: { verified: false, teamId: null, signers: [], keySha256: null }, untrusted: null };
  // Ad hoc signatures (no CMS) carry hashes only: nobody signed them, so they are not verified, though not broken.
  const verified = cms.every((c) => c?.verified === true);
  const mainIndex = Math.max(0, exe.slices.findIndex((s) => s.cputype === CPU_ARM64));
  const main = exe.slices[mainIndex];
  const certificates = cms[mainIndex]?.certificates ?? [];
  const signers = certificates.map(describeCertificate).filter((c): c is NonNullable<typeof c> => c !== null);
  const certTeam = certificates.length ? certificateTeamId(certificates[0]) : null;
  if (certTeam && main.cd.teamId && certTeam !== main.cd.teamId) {
    addProblem(report, `${exeName}: the CodeDirectory names team ${main.cd.teamId}, its certificate team ${certTeam}`);
  }
  // Only a signer the CMS signature proved (it verified with that certificate's key) has a chain worth checking.
  const chains = cms.map((c) => (c?.verified ? checkSignerChain(c.certificates[0], { signedAt: c.signingTime ?? null, now: trust.now }, trust.anchors) : null));
  const refused = chains.find((c) => c?.trusted === false);
  const mainChain = chains[mainIndex];
  if (refused && !refused.trusted) {
    return { signing: { verified: false, teamId: null, signers, keySha256: null }, untrusted: untrustedFinding(exeName, refused.reason, certTeam) };
  }
  const proven = mainChain?.trusted ? mainChain : null;
  return { signing: { verified, teamId: proven?.teamId ?? null, signers, keySha256: proven?.keySha256 ?? null }, untrusted: null };
}

/** A signature made with a certificate Apple did not issue (or no longer vouches for): whatever team it names is unproven. */
function untrustedFinding(exeName: string, reason: string, claimedTeam: string | null): Finding {
  return {
    id: 'ios.signer-untrusted',
    severity: 'critical',
    title: 'Signing certificate is not from Apple',
    detail: `${exeName} is signed with a certificate that does not chain to Apple's roots through a Worldwide Developer Relations CA: ${reason}.${claimedTeam ? ` Its subject claims team ${claimedTeam}, but only a certificate Apple issued proves a team: anyone can copy a team's OU into a certificate of their own.` : ''} iOS refuses to install such an app, and a bundle re-signed this way is what a repackaged app looks like.`,
    fix: 'Sign with the Apple Development or Apple Distribution certificate Apple issued to your team (Xcode Product › Archive › Distribute App, or `xcodebuild -exportArchive`), and make sure it is valid when the package is scanned.',
  };
}

function sealBrokenFinding(report: SealReport): Finding {
  const quoted = report.problems.slice(0, QUOTED).map((p) => (p.length > QUOTED_CHARS ? `${p.slice(0, QUOTED_CHARS - 1)}…` : p));
  const more = report.total - quoted.length;
  return {
    id: 'ios.seal-broken',
    severity: 'critical',
    title: 'Code signature seal is broken',
    detail: `The bundle no longer matches its code signature: ${quoted.join('; ')}${more > 0 ? `; and ${more} more` : ''}. iOS refuses to install or launch such an app; a package changed after signing is what a repackaged or tampered build looks like.`,
    fix: 'Upload the IPA exactly as Xcode exported it (Product › Archive › Distribute App, or xcodebuild -exportArchive): change nothing inside the signed .app, and re-sign with codesign after any change.',
  };
}

/** An app bundle that codesign never sealed: no device installs it, and nothing says who built it. */
function unsignedFinding(appDir: string): Finding {
  return {
    id: 'ios.unsigned',
    severity: 'high',
    title: 'App is not code-signed',
    detail: `${appDir}_CodeSignature/CodeResources is missing and the main executable has no code signature: the bundle was never sealed by codesign, so iOS refuses to install it and its origin cannot be verified (a simulator build, or an archive assembled by hand).`,
    fix: 'Export the archive signed for distribution: Xcode Product › Archive › Distribute App, or `xcodebuild -exportArchive` with an export options plist naming your team and method.',
  };
}
