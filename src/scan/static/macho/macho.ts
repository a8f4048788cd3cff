import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';

/** A Mach-O file that cannot be read as one: the caller reports it as a finding, never as a crash. */
export class MachoError extends Error {
  override name = 'MachoError';
}

/**
 * Random access to a file that may only be streamed (a zip entry): `ranges` copies the requested byte ranges in one
 * forward pass and stops once past the last of them, `size` is the file's length.
 */
export type ByteSource = {
  size: number;
  ranges(ranges: ReadonlyArray<readonly [number, number]>): Promise<Buffer[]>;
  /**
   * The same copy for a reader's last pass over the file: a source that also digests the file reads on to its end
   * here, so the digest costs no pass of its own. Absent, `ranges` serves.
   */
  finalRanges?(ranges: ReadonlyArray<readonly [number, number]>): Promise<Buffer[]>;
};

/** One architecture of a thin or fat Mach-O, with where its embedded code signature lies (relative to the slice). */
export type MachoSlice = {
  offset: number;
  size: number;
  cputype: number;
  codeSignature: { dataoff: number; datasize: number } | null;
};

const MH_MAGIC = 0xfeedface;
const MH_MAGIC_64 = 0xfeedfacf;
const FAT_MAGIC = 0xcafebabe;
const FAT_MAGIC_64 = 0xcafebabf;
const LC_CODE_SIGNATURE = 0x1d;

/** True when the first bytes are those of a Mach-O file, thin (either byte order) or fat. */
export function isMacho(head: Buffer): boolean {
  if (head.length < 4) return false;
  const be = head.readUInt32BE(0);
  const le = head.readUInt32LE(0);
  return be === FAT_MAGIC || be === FAT_MAGIC_64 || [MH_MAGIC, MH_MAGIC_64].includes(be) || [MH_MAGIC, MH_MAGIC_64].includes(le);
}

/** One slice's header fields and its load commands (sizeofcmds bytes, bounded by LIMITS.machoLoadCommandBytes). */
export type SliceCommands = { offset: number; size: number; header: SliceHeader; commands: Buffer };

/**
 * The slices of a Mach-O and each one's LC_CODE_SIGNATURE. Reads the fat header, then each slice's header and load
 * commands: at most LIMITS.machoFatArchs slices, LIMITS.machoLoadCommands commands and machoLoadCommandBytes bytes each.
 */
export async function readSlices(src: ByteSource): Promise<MachoSlice[]> {
  const slices = await readSliceCommands(src);
  return slices.map(({ offset, size, header, commands }, k) => {
    const codeSignature = findCodeSignature(commands, header, k);
    if (codeSignature && codeSignature.dataoff + codeSignature.datasize > size) throw new MachoError(`slice ${k}: LC_CODE_SIGNATURE points past the end of the slice`);
    return { offset, size, cputype: header.cputype, codeSignature };
  });
}

/** The slices of a thin or fat Mach-O with their headers and load commands, in two short passes from the start. */
export async function readSliceCommands(src: ByteSource): Promise<SliceCommands[]> {
  const [head] = await src.ranges([[0, Math.min(src.size, 8 + LIMITS.machoFatArchs * 32)]]);
  if (head.length < 8) throw new MachoError('file too short for a Mach-O header');
  const magic = head.readUInt32BE(0);
  const slices: Array<{ offset: number; size: number }> = [];
  if (magic === FAT_MAGIC || magic === FAT_MAGIC_64) {
    const count = head.readUInt32BE(4);
    if (count === 0) throw new MachoError('fat header lists no architecture');
    if (count > LIMITS.machoFatArchs) throw new LimitExceededError('machoFatArchs', `fat Mach-O lists ${count} architectures, over the ${LIMITS.machoFatArchs} limit`);
    const stride = magic === FAT_MAGIC ? 20 : 32;
    if (8 + count * stride > head.length) throw new MachoError('fat header runs past the end of the file');
    for (let k = 0; k < count; k++) {
      const at = 8 + k * stride;
      const offset = magic === FAT_MAGIC ? head.readUInt32BE(at + 8) : Number(head.readBigUInt64BE(at + 8));
      const size = magic === FAT_MAGIC ? head.readUInt32BE(at + 12) : Number(head.readBigUInt64BE(at + 16));
      if (offset + size > src.size || size < 28) throw new MachoError(`fat architecture ${k} lies outside the file`);
      slices.push({ offset, size });
    }
  } else {
    slices.push({ offset: 0, size: src.size });
  }
  // Each slice's header first (32 bytes), then its load commands, in one pass each.
  const headers = await src.ranges(slices.map((s) => [s.offset, s.offset + Math.min(32, s.size)] as const));
  const shapes = headers.map((h, k) => sliceHeader(h, k));
  const commands = await src.ranges(shapes.map((h, k) => [slices[k].offset + h.headerSize, slices[k].offset + h.headerSize + h.sizeofcmds] as const));
  return slices.map((s, k) => {
    if (shapes[k].headerSize + shapes[k].sizeofcmds > s.size) throw new MachoError(`slice ${k}: load commands run past the slice`);
    return { ...s, header: shapes[k], commands: commands[k] };
  });
}

/** A slice's mach_header fields (either byte order, 32- or 64-bit). */
export type SliceHeader = {
  le: boolean; is64: boolean; headerSize: number; ncmds: number; sizeofcmds: number;
  cputype: number; cpusubtype: number; filetype: number; flags: number;
};

function sliceHeader(h: Buffer, k: number): SliceHeader {
  if (h.length < 28) throw new MachoError(`slice ${k}: truncated Mach-O header`);
  const le = [MH_MAGIC, MH_MAGIC_64].includes(h.readUInt32LE(0));
  if (!le && ![MH_MAGIC, MH_MAGIC_64].includes(h.readUInt32BE(0))) throw new MachoError(`slice ${k}: not a Mach-O header`);
  const u32 = (at: number) => (le ? h.readUInt32LE(at) : h.readUInt32BE(at));
  const is64 = u32(0) === MH_MAGIC_64;
  const ncmds = u32(16);
  const sizeofcmds = u32(20);
  if (ncmds > LIMITS.machoLoadCommands) throw new LimitExceededError('machoLoadCommands', `slice ${k} declares ${ncmds} load commands, over the ${LIMITS.machoLoadCommands} limit`);
  if (sizeofcmds > LIMITS.machoLoadCommandBytes) throw new LimitExceededError('machoLoadCommandBytes', `slice ${k} declares ${sizeofcmds} bytes of load commands, over the ${LIMITS.machoLoadCommandBytes}-byte limit`);
  return { le, is64, headerSize: is64 ? 32 : 28, ncmds, sizeofcmds, cputype: u32(4), cpusubtype: u32(8), filetype: u32(12), flags: u32(24) };
}

function findCodeSignature(cmds: Buffer, h: SliceHeader, k: number): MachoSlice['codeSignature'] {
  const u32 = (at: number) => (h.le ? cmds.readUInt32LE(at) : cmds.readUInt32BE(at));
  let found: MachoSlice['codeSignature'] = null;
  for (let i = 0, at = 0; i < h.ncmds; i++) {
    if (at + 8 > cmds.length) throw new MachoError(`slice ${k}: load command ${i} runs past sizeofcmds`);
    const cmd = u32(at);
    const size = u32(at + 4);
    if (size < 8 || at + size > cmds.length) throw new MachoError(`slice ${k}: load command ${i} has an invalid size`);
    if (cmd === LC_CODE_SIGNATURE) {
      if (size < 16) throw new MachoError(`slice ${k}: LC_CODE_SIGNATURE too short`);
      if (found) throw new MachoError(`slice ${k}: more than one LC_CODE_SIGNATURE`);
      found = { dataoff: u32(at + 8), datasize: u32(at + 12) };
    }
    at += size;
  }
  return found;
}
