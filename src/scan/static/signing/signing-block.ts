import { open } from 'node:fs/promises';
import { LimitExceededError } from '../errors';
import { LIMITS } from '../limits';

export const SCHEME_V2 = 0x7109871a;
export const SCHEME_V3 = 0xf05368c0;
export const SCHEME_V31 = 0x1b93ad61;

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const EOCD_MIN = 22;
const MAX_COMMENT = 0xffff;
const MAGIC = Buffer.from('APK Sig Block 42', 'latin1');

/**
 * The ID-value pairs of the APK Signing Block that sits just before the central directory,
 * or null when there is none. Reads only the zip tail and the block itself.
 */
export async function readSigningBlock(filePath: string): Promise<Map<number, Buffer> | null> {
  const fh = await open(filePath, 'r');
  try {
    const { size } = await fh.stat();
    const cdOffset = await centralDirectoryOffset(fh, size);
    if (cdOffset === null || cdOffset < 32) return null;
    const footer = await readAt(fh, cdOffset - 24, 24);
    if (!footer.subarray(8).equals(MAGIC)) return null;
    const blockSize = Number(footer.readBigUInt64LE(0));
    const start = cdOffset - blockSize - 8;
    if (blockSize > LIMITS.signingBlock) {
      throw new LimitExceededError('signingBlock', `the APK Signing Block declares ${blockSize} bytes, over the ${LIMITS.signingBlock}-byte limit`);
    }
    if (blockSize < 24 || start < 0) return null;
    const block = await readAt(fh, start, blockSize + 8);
    if (Number(block.readBigUInt64LE(0)) !== blockSize) return null;
    return pairs(block.subarray(8, block.length - 24));
  } finally {
    await fh.close();
  }
}

function pairs(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  // Pairs past the cap are not looked at (see limits.ts).
  for (let p = 0; p + 12 <= buf.length && out.size < LIMITS.signingBlockPairs; ) {
    const len = Number(buf.readBigUInt64LE(p));
    if (len < 4 || p + 8 + len > buf.length) break;
    out.set(buf.readUInt32LE(p + 8), buf.subarray(p + 12, p + 8 + len));
    p += 8 + len;
  }
  return out;
}

async function centralDirectoryOffset(fh: Awaited<ReturnType<typeof open>>, size: number): Promise<number | null> {
  const tailLength = Math.min(size, EOCD_MIN + MAX_COMMENT);
  const tail = await readAt(fh, size - tailLength, tailLength);
  for (let p = tail.length - EOCD_MIN; p >= 0; p--) {
    if (tail.readUInt32LE(p) !== EOCD_SIGNATURE) continue;
    const offset = tail.readUInt32LE(p + 16);
    if (offset !== 0xffffffff) return offset;
    // Zip64: the locator (20 bytes) precedes the EOCD and points at the zip64 EOCD record.
    if (p < 20 || tail.readUInt32LE(p - 20) !== ZIP64_LOCATOR_SIGNATURE) return null;
    const zip64Eocd = Number(tail.readBigUInt64LE(p - 20 + 8));
    const record = await readAt(fh, zip64Eocd, 56);
    return Number(record.readBigUInt64LE(48));
  }
  return null;
}

async function readAt(fh: Awaited<ReturnType<typeof open>>, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Certificates (DER) of every signer of a v2 or v3 signature scheme block value. */
export function schemeCertificates(value: Buffer): Buffer[] {
  const certs: Buffer[] = [];
  const signers = lengthPrefixed(lengthPrefixed(value, 1)[0] ?? Buffer.alloc(0), LIMITS.certificatesPerFile + 1);
  for (const signer of signers) {
    // signer = signed data, ...; signed data = digests, certificates, ... (same start in v2 and v3)
    const signedData = lengthPrefixed(signer, 1)[0];
    if (!signedData) continue;
    const certificates = lengthPrefixed(signedData, 2)[1];
    if (certificates) certs.push(...lengthPrefixed(certificates, LIMITS.certificatesPerFile + 1));
    if (certs.length > LIMITS.certificatesPerFile) {
      throw new LimitExceededError('certificatesPerFile', `an APK Signing Block value carries over ${LIMITS.certificatesPerFile} certificates`);
    }
  }
  return certs;
}

/**
 * Splits a sequence of uint32-length-prefixed items, at most `max` of them (so millions of empty items cost
 * nothing); stops at the first item that overruns.
 */
function lengthPrefixed(buf: Buffer, max: number): Buffer[] {
  const items: Buffer[] = [];
  for (let p = 0; p + 4 <= buf.length && items.length < max; ) {
    const len = buf.readUInt32LE(p);
    if (p + 4 + len > buf.length) break;
    items.push(buf.subarray(p + 4, p + 4 + len));
    p += 4 + len;
  }
  return items;
}
