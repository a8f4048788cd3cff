import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { CodePageChecker } from '../macho/code-pages';
import { bestCodeDirectory, cdHash, parseEmbeddedSignature, specialSlot, SLOT, type CodeDirectory, type EmbeddedSignature } from '../macho/code-signature';
import { MachoError, readSlices, type ByteSource, type MachoSlice } from '../macho/macho';
import type { PackageZip } from '../package/zip-reader';
import { entryBytes } from './entry-bytes';
import { addProblem, type SealReport } from './seal-report';

/** The signature of the main executable as read: one per slice, in the order of the fat header. */
export type ExecutableSignature = { slices: Array<{ cputype: number; signature: EmbeddedSignature; cd: CodeDirectory }> };

/** The files of a bundle that special slots bind; null for code outside a bundle (a nested dylib), which binds none. */
export type BoundFiles = { infoPlist: Buffer | null; codeResources: Buffer | null };

/** Blob slots a special slot binds (Info.plist and CodeResources are files of the bundle, compared by the caller). */
const BLOB_SLOTS: Array<[number, string]> = [[SLOT.REQUIREMENTS, 'requirements'], [SLOT.ENTITLEMENTS, 'entitlements'], [SLOT.DER_ENTITLEMENTS, 'DER entitlements']];

/**
 * Checks the main executable's code signature as codesign --verify does: every slice carries LC_CODE_SIGNATURE,
 * the strongest CodeDirectory's special slots match Info.plist (slot 1), the requirements (2), CodeResources (3) and
 * the entitlements (5, 7), and every page of code hashes to its code slot. Problems go to the report, each naming
 * the file; returns what was read for the signer, 'unsigned' when a slice has no LC_CODE_SIGNATURE, or null when the
 * signature could not be read.
 */
export async function checkExecutable(
  zip: PackageZip, name: string, bound: BoundFiles, report: SealReport,
): Promise<ExecutableSignature | 'unsigned' | null> {
  const src = entryBytes(zip, name, 'sealFileBytes', LIMITS.sealFileBytes);
  try {
    const read = await readSignatures(src, name, report);
    if (!read) return 'unsigned';
    const { slices, signatures } = read;
    const checked: ExecutableSignature['slices'] = [];
    for (const [k, signature] of signatures.entries()) {
      const cd = bestCodeDirectory(signature);
      for (const each of signature.codeDirectories.filter((c) => c.algorithm)) checkSpecialSlots(each, signature, bound, name, report);
      checked.push({ cputype: slices[k].cputype, signature, cd });
    }
    const pages = new CodePageChecker(checked.map((c, k) => ({ sliceOffset: slices[k].offset, sliceSize: slices[k].size, cd: c.cd })));
    await zip.stream(name, 'sealFileBytes', LIMITS.sealFileBytes, (chunk, offset) => {
      pages.update(chunk, offset);
      return offset + chunk.length < pages.end;
    });
    pages.results().forEach((r, k) => {
      if (r.firstBadPage !== null) addProblem(report, `${name}: code page ${r.firstBadPage} of ${r.pages}${slices.length > 1 ? ` (architecture ${k})` : ''} does not match its signed hash`);
    });
    return { slices: checked };
  } catch (err) {
    // A corrupt entry is as unverifiable as a corrupt signature.
    if (!(err instanceof MachoError) && !(err instanceof UnreadablePackageError)) throw err;
    addProblem(report, `${name}: code signature unreadable (${err.message})`);
    return null;
  }
}

async function readSignatures(src: ByteSource, name: string, report: SealReport): Promise<{ slices: MachoSlice[]; signatures: EmbeddedSignature[] } | null> {
  const slices = await readSlices(src);
  const unsigned = slices.filter((s) => !s.codeSignature);
  if (unsigned.length) {
    addProblem(report, `${name}: no code signature (LC_CODE_SIGNATURE missing${slices.length > 1 ? ` in ${unsigned.length} of ${slices.length} architectures` : ''})`);
    return null;
  }
  const ranges = slices.map((s) => {
    const { dataoff, datasize } = s.codeSignature as NonNullable<MachoSlice['codeSignature']>;
    if (datasize > LIMITS.codeSignatureBytes) throw new LimitExceededError('codeSignatureBytes', `${name}'s code signature is ${datasize} bytes, over the ${LIMITS.codeSignatureBytes}-byte limit`);
    return [s.offset + dataoff, s.offset + dataoff + datasize] as const;
  });
  const blobs = await src.ranges(ranges);
  return { slices, signatures: blobs.map((b) => parseEmbeddedSignature(b)) };
}

function checkSpecialSlots(cd: CodeDirectory, sig: EmbeddedSignature, bound: BoundFiles, name: string, report: SealReport): void {
  const appDir = name.slice(0, name.lastIndexOf('/') + 1);
  const which = `CodeDirectory ${cd.algorithm}`;
  const info = specialSlot(cd, SLOT.INFO_PLIST);
  if (bound.infoPlist && !info) addProblem(report, `${appDir}Info.plist: not bound by the code signature (${which} special slot 1 is empty)`);
  else if (bound.infoPlist && info && !info.equals(cdHash(cd, bound.infoPlist))) addProblem(report, `${appDir}Info.plist: changed after signing (${which} special slot 1 differs)`);
  // A missing CodeResources is reported once by the caller.
  const resources = specialSlot(cd, SLOT.RESOURCES);
  if (bound.codeResources && !resources) {
    addProblem(report, `${appDir}_CodeSignature/CodeResources: not bound by the code signature (${which} special slot 3 is empty)`);
  } else if (bound.codeResources && resources && !resources.equals(cdHash(cd, bound.codeResources))) {
    addProblem(report, `${appDir}_CodeSignature/CodeResources: changed after signing (${which} special slot 3 differs)`);
  }
  for (const [slot, what] of BLOB_SLOTS) {
    const expected = specialSlot(cd, slot);
    const blob = sig.blobs.get(slot);
    if (!expected && !blob) continue;
    if (!expected || !blob || !expected.equals(cdHash(cd, blob))) addProblem(report, `${name}: signed ${what} do not match (${which} special slot ${slot})`);
  }
}

/** cdhashes of every CodeDirectory of every slice (as files2 records nested code, truncated to its length by the caller). */
export function cdHashesOf(exe: ExecutableSignature): Buffer[] {
  return exe.slices.flatMap((s) => s.signature.codeDirectories.filter((c) => c.algorithm).map((c) => cdHash({ algorithm: c.algorithm, hashSize: 64 }, c.blob)));
}
