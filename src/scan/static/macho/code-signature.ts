import { createHash } from 'node:crypto';
import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import { MachoError } from './macho';

/**
 * The embedded code signature of a Mach-O slice (what LC_CODE_SIGNATURE points at), as Apple's cs_blobs.h lays it
 * out: a SuperBlob indexing CodeDirectories (the primary in slot 0, alternates from 0x1000), the requirements,
 * the entitlements and the CMS signature (slot 0x10000). Every field is big-endian and every offset is checked.
 */
export type CodeDirectory = {
  slot: number;
  /** The whole CodeDirectory blob: its hash is the cdhash. */
  blob: Buffer;
  version: number;
  hashType: number;
  hashSize: number;
  /** Node's name of the digest, or null for a hash type this reader does not know. */
  algorithm: string | null;
  pageSizeLog2: number;
  nSpecialSlots: number;
  nCodeSlots: number;
  codeLimit: number;
  identifier: string;
  teamId: string | null;
  hashOffset: number;
};

export type EmbeddedSignature = {
  codeDirectories: CodeDirectory[];
  /** Every blob by slot type, header included (the form special slots hash). */
  blobs: Map<number, Buffer>;
  /** The DER of the CMS SignedData, or null for an ad-hoc signature (no blob, or an empty wrapper). */
  cms: Buffer | null;
};

export const SLOT = { CODE_DIRECTORY: 0, INFO_PLIST: 1, REQUIREMENTS: 2, RESOURCES: 3, ENTITLEMENTS: 5, DER_ENTITLEMENTS: 7, ALTERNATE_CD: 0x1000, CMS: 0x10000 } as const;

const SUPERBLOB = 0xfade0cc0;
const CODEDIRECTORY = 0xfade0c02;
const BLOBWRAPPER = 0xfade0b01;

/** Hash types of cs_blobs.h: SHA-1, SHA-256, SHA-256 truncated to 20 bytes, SHA-384. */
const HASH_TYPES: Record<number, { algorithm: string; size: number }> = {
  1: { algorithm: 'sha1', size: 20 },
  2: { algorithm: 'sha256', size: 32 },
  3: { algorithm: 'sha256', size: 20 },
  4: { algorithm: 'sha384', size: 48 },
};
/** Which CodeDirectory is checked when there are several, strongest first (as the kernel picks). */
const PREFERENCE = [4, 2, 3, 1];

export function parseEmbeddedSignature(buf: Buffer): EmbeddedSignature {
  if (buf.length < 12 || buf.readUInt32BE(0) !== SUPERBLOB) throw new MachoError('code signature is not an embedded-signature SuperBlob');
  const length = buf.readUInt32BE(4);
  if (length > buf.length || length < 12) throw new MachoError('SuperBlob length runs past LC_CODE_SIGNATURE');
  const count = buf.readUInt32BE(8);
  if (count > LIMITS.codeSignatureBlobs) throw new LimitExceededError('codeSignatureBlobs', `the code signature indexes ${count} blobs, over the ${LIMITS.codeSignatureBlobs} limit`);
  if (12 + count * 8 > length) throw new MachoError('SuperBlob index runs past its length');
  const blobs = new Map<number, Buffer>();
  for (let k = 0; k < count; k++) {
    const type = buf.readUInt32BE(12 + k * 8);
    const offset = buf.readUInt32BE(16 + k * 8);
    if (offset + 8 > length) throw new MachoError(`blob ${k} (slot ${type}) lies outside the SuperBlob`);
    const blobLength = buf.readUInt32BE(offset + 4);
    if (blobLength < 8 || offset + blobLength > length) throw new MachoError(`blob ${k} (slot ${type}) runs past the SuperBlob`);
    if (blobs.has(type)) throw new MachoError(`slot ${type} appears twice in the SuperBlob`);
    blobs.set(type, buf.subarray(offset, offset + blobLength));
  }
  const codeDirectories = [...blobs.entries()]
    .filter(([type]) => type === SLOT.CODE_DIRECTORY || (type >= SLOT.ALTERNATE_CD && type < SLOT.ALTERNATE_CD + 5))
    .map(([type, blob]) => parseCodeDirectory(blob, type));
  if (codeDirectories.length === 0) throw new MachoError('the code signature has no CodeDirectory');
  const wrapper = blobs.get(SLOT.CMS);
  if (wrapper && wrapper.readUInt32BE(0) !== BLOBWRAPPER) throw new MachoError('the CMS slot does not hold a blob wrapper');
  const cms = wrapper && wrapper.length > 8 ? wrapper.subarray(8) : null;
  return { codeDirectories, blobs, cms };
}

function parseCodeDirectory(blob: Buffer, slot: number): CodeDirectory {
  if (blob.length < 44 || blob.readUInt32BE(0) !== CODEDIRECTORY) throw new MachoError(`slot ${slot} is not a CodeDirectory`);
  const version = blob.readUInt32BE(8);
  const hashOffset = blob.readUInt32BE(16);
  const identOffset = blob.readUInt32BE(20);
  const nSpecialSlots = blob.readUInt32BE(24);
  const nCodeSlots = blob.readUInt32BE(28);
  let codeLimit = blob.readUInt32BE(32);
  const hashSize = blob[36];
  const hashType = blob[37];
  const pageSizeLog2 = blob[39];
  const known = HASH_TYPES[hashType];
  if (known && known.size !== hashSize) throw new MachoError(`CodeDirectory (slot ${slot}): hash size ${hashSize} does not fit hash type ${hashType}`);
  if (hashSize === 0) throw new MachoError(`CodeDirectory (slot ${slot}): hash size 0`);
  if (pageSizeLog2 !== 0 && (pageSizeLog2 < 9 || pageSizeLog2 > 30)) throw new MachoError(`CodeDirectory (slot ${slot}): page size 2^${pageSizeLog2}`);
  // Special slots sit before hashOffset, code slots after it; both must lie inside the blob.
  if (hashOffset < nSpecialSlots * hashSize || hashOffset + nCodeSlots * hashSize > blob.length) {
    throw new MachoError(`CodeDirectory (slot ${slot}): its hash slots lie outside the blob`);
  }
  let teamId: string | null = null;
  if (version >= 0x20200 && blob.length >= 52) {
    const teamOffset = blob.readUInt32BE(48);
    if (teamOffset) teamId = cString(blob, teamOffset, `CodeDirectory (slot ${slot}) team id`);
  }
  if (version >= 0x20300 && blob.length >= 64) {
    const codeLimit64 = Number(blob.readBigUInt64BE(56));
    if (codeLimit64) codeLimit = codeLimit64;
  }
  return {
    slot, blob, version, hashType, hashSize, algorithm: known?.algorithm ?? null, pageSizeLog2, nSpecialSlots, nCodeSlots,
    codeLimit, identifier: cString(blob, identOffset, `CodeDirectory (slot ${slot}) identifier`), teamId, hashOffset,
  };
}

/** A NUL-terminated string inside a blob (identifiers and team ids are a few dozen characters). */
function cString(blob: Buffer, at: number, what: string): string {
  if (at >= blob.length) throw new MachoError(`${what} lies outside the CodeDirectory`);
  const end = blob.indexOf(0, at);
  if (end < 0) throw new MachoError(`${what} is not terminated`);
  return blob.toString('utf8', at, end);
}

/** The CodeDirectory to check: the strongest hash this reader knows. */
export function bestCodeDirectory(sig: EmbeddedSignature): CodeDirectory {
  for (const type of PREFERENCE) {
    const cd = sig.codeDirectories.find((c) => c.hashType === type);
    if (cd) return cd;
  }
  throw new MachoError(`no CodeDirectory uses a known hash type (${sig.codeDirectories.map((c) => c.hashType).join(', ')})`);
}

/** The hash in special slot `n` (1 = Info.plist, 3 = CodeResources, ...), or null when absent or all zero (unbound). */
export function specialSlot(cd: CodeDirectory, n: number): Buffer | null {
  if (n > cd.nSpecialSlots) return null;
  const at = cd.hashOffset - n * cd.hashSize;
  const hash = cd.blob.subarray(at, at + cd.hashSize);
  return hash.every((b) => b === 0) ? null : hash;
}

export function codeSlot(cd: CodeDirectory, k: number): Buffer {
  const at = cd.hashOffset + k * cd.hashSize;
  return cd.blob.subarray(at, at + cd.hashSize);
}

/** A hash as the CodeDirectory stores it: the digest truncated to hashSize (hash type 3 truncates SHA-256). */
export function cdHash(cd: Pick<CodeDirectory, 'algorithm' | 'hashSize'>, data: Buffer): Buffer {
  if (!cd.algorithm) throw new MachoError('unknown hash type');
  return createHash(cd.algorithm).update(data).digest().subarray(0, cd.hashSize);
}
