/** nlist entry sizes: n_strx(4) n_type(1) n_sect(1) n_desc(2) n_value(4 or 8). */
export const NLIST_SIZE = { 32: 12, 64: 16 } as const;

const N_STAB = 0xe0;
const N_TYPE = 0x0e;
const N_UNDF = 0x0;
const N_EXT = 0x01;

/** The undefined symbols of a symbol table: how many, and which of the watched names are among them. */
export type UndefinedSymbols = { count: number; watched: string[] };

/**
 * Reads nlist entries (the whole table, or LC_DYSYMTAB's undefined range) and keeps the undefined external ones, as
 * `nm -u` lists them. Names are looked up in `strtab` only as far as the longest watched name plus its NUL: a
 * hostile table whose strings have no NUL, or whose n_strx all point at one long string, costs one bounded compare
 * per symbol, never a scan of the table. Linear in `nlist.length`; counts and offsets come from the buffers' own
 * lengths, never from the file's header.
 */
export function undefinedSymbols(nlist: Buffer, strtab: Buffer, opts: { le: boolean; is64: boolean }, watched: ReadonlySet<string>): UndefinedSymbols {
  const size = opts.is64 ? NLIST_SIZE[64] : NLIST_SIZE[32];
  const longest = Math.max(0, ...[...watched].map((w) => w.length));
  const found = new Set<string>();
  let count = 0;
  for (let at = 0; at + size <= nlist.length; at += size) {
    const type = nlist[at + 4];
    if (type & N_STAB || (type & N_TYPE) !== N_UNDF || !(type & N_EXT)) continue;
    count++;
    const strx = opts.le ? nlist.readUInt32LE(at) : nlist.readUInt32BE(at);
    if (strx >= strtab.length) continue;
    const window = strtab.subarray(strx, Math.min(strtab.length, strx + longest + 1));
    const nul = window.indexOf(0);
    if (nul < 0) continue;
    const name = window.toString('latin1', 0, nul);
    if (watched.has(name)) found.add(name);
  }
  return { count, watched: [...found].sort() };
}
