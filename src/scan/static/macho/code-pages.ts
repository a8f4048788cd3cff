import { createHash, type Hash } from 'node:crypto';
import { codeSlot, type CodeDirectory } from './code-signature';
import { MachoError } from './macho';

/**
 * Checks the code page hashes of one or more slices while the file streams past once (chunks in order): each page
 * of 2^pageSize bytes up to codeLimit is hashed and compared with its code slot, so nothing is held but one page's
 * running digest. This is what catches a patched executable whose signature was left in place.
 */
export class CodePageChecker {
  private readonly states: Array<{ start: number; end: number; pageSize: number; cd: CodeDirectory; page: number; filled: number; digest: Hash | null; firstBad: number | null }>;

  constructor(checks: Array<{ sliceOffset: number; sliceSize: number; cd: CodeDirectory }>) {
    this.states = checks.map(({ sliceOffset, sliceSize, cd }) => {
      if (!cd.algorithm) throw new MachoError(`CodeDirectory hash type ${cd.hashType} is unknown`);
      if (cd.codeLimit > sliceSize) throw new MachoError(`codeLimit ${cd.codeLimit} runs past the slice (${sliceSize} bytes)`);
      const pageSize = cd.pageSizeLog2 ? 2 ** cd.pageSizeLog2 : Math.max(cd.codeLimit, 1);
      const pages = cd.codeLimit === 0 ? 0 : Math.ceil(cd.codeLimit / pageSize);
      if (pages !== cd.nCodeSlots) throw new MachoError(`CodeDirectory has ${cd.nCodeSlots} code slots for ${pages} pages of code`);
      return { start: sliceOffset, end: sliceOffset + cd.codeLimit, pageSize, cd, page: 0, filled: 0, digest: null, firstBad: null };
    });
  }

  /** The end of the last byte any check needs: a reader may stop there. */
  get end(): number {
    return Math.max(0, ...this.states.map((s) => s.end));
  }

  update(chunk: Buffer, offset: number): void {
    for (const s of this.states) {
      let from = Math.max(offset, s.start + s.page * s.pageSize + s.filled);
      const to = Math.min(offset + chunk.length, s.end);
      while (from < to) {
        const pageEnd = Math.min(s.start + (s.page + 1) * s.pageSize, s.end);
        const take = Math.min(to, pageEnd);
        s.digest ??= createHash(s.cd.algorithm as string);
        s.digest.update(chunk.subarray(from - offset, take - offset));
        s.filled += take - from;
        from = take;
        if (take === pageEnd) this.closePage(s);
      }
    }
  }

  private closePage(s: CodePageChecker['states'][number]): void {
    const hash = (s.digest as Hash).digest().subarray(0, s.cd.hashSize);
    if (s.firstBad === null && !hash.equals(codeSlot(s.cd, s.page))) s.firstBad = s.page;
    s.page++;
    s.filled = 0;
    s.digest = null;
  }

  /** Per check: the first page whose hash differs, or null when every page matched. */
  results(): Array<{ firstBadPage: number | null; pages: number }> {
    return this.states.map((s) => {
      // A stream that ended early leaves pages unhashed: the file is shorter than the CodeDirectory says.
      const complete = s.page === s.cd.nCodeSlots;
      return { firstBadPage: s.firstBad ?? (complete ? null : s.page), pages: s.cd.nCodeSlots };
    });
  }
}
