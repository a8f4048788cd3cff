import { createHash } from 'node:crypto';
import type { LimitName } from '../package/limits';
import type { ByteSource } from '../macho/macho';
import type { PackageZip } from '../package/zip-reader';

/**
 * A zip entry as a ByteSource: each call streams the entry once from its start, copies the requested ranges and
 * stops after the last of them. The ranges' total is bounded by the caller (their lengths come from caps).
 */
export function entryBytes(zip: PackageZip, name: string, kind: LimitName, maxBytes: number): ByteSource {
  return copier(zip, name, kind, maxBytes, null);
}

/**
 * entryBytes that also digests the entry (SHA-256) during a reader's final pass, which then runs on to the end of the
 * entry: the reader's last pass and the digest cost one read. `sha256()` reads the entry itself when no final pass
 * did (the reader stopped early on a malformed file).
 */
export function digestingEntryBytes(zip: PackageZip, name: string, kind: LimitName, maxBytes: number): ByteSource & { sha256(): Promise<string> } {
  let digest: string | null = null;
  const plain = copier(zip, name, kind, maxBytes, null);
  return {
    ...plain,
    async finalRanges(ranges) {
      const hash = createHash('sha256');
      const out = await copier(zip, name, kind, maxBytes, hash).ranges(ranges);
      digest = hash.digest('hex');
      return out;
    },
    async sha256() {
      digest ??= (await zip.hash(name, 'sha256', kind, maxBytes)).toString('hex');
      return digest;
    },
  };
}

type Hash = ReturnType<typeof createHash>;

/** Copies ranges in one pass; with `hash`, the pass reads the whole entry into it. */
function copier(zip: PackageZip, name: string, kind: LimitName, maxBytes: number, hash: Hash | null): ByteSource {
  const entry = zip.entry(name);
  const size = entry?.uncompressedSize ?? 0;
  return {
    size,
    async ranges(ranges) {
      const out = ranges.map(([start, end]) => Buffer.alloc(Math.max(0, Math.min(end, size) - start)));
      const last = hash ? Infinity : Math.max(0, ...ranges.map(([, end]) => end));
      if (last === 0) return out;
      await zip.stream(name, kind, maxBytes, (chunk, offset) => {
        hash?.update(chunk);
        ranges.forEach(([start], k) => {
          const from = Math.max(start, offset);
          const to = Math.min(start + out[k].length, offset + chunk.length);
          if (from < to) chunk.copy(out[k], from - start, from - offset, to - offset);
        });
        return offset + chunk.length < last;
      });
      return out;
    },
  };
}
