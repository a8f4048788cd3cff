import type { LimitName } from '../package/limits';
import type { ByteSource } from '../macho/macho';
import type { PackageZip } from '../package/zip-reader';

/**
 * A zip entry as a ByteSource: each call streams the entry once from its start, copies the requested ranges and
 * stops after the last of them. The ranges' total is bounded by the caller (their lengths come from caps).
 */
export function entryBytes(zip: PackageZip, name: string, kind: LimitName, maxBytes: number): ByteSource {
  const entry = zip.entry(name);
  const size = entry?.uncompressedSize ?? 0;
  return {
    size,
    async ranges(ranges) {
      const out = ranges.map(([start, end]) => Buffer.alloc(Math.max(0, Math.min(end, size) - start)));
      const last = Math.max(0, ...ranges.map(([, end]) => end));
      if (last === 0) return out;
      await zip.stream(name, kind, maxBytes, (chunk, offset) => {
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
