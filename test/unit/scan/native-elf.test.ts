// The ELF reader against binutils' readelf, on libraries built by real compilers for every Android ABI (and a
// big-endian one), and on the host's own shared libraries (other linkers' layouts, versioned symbols, DT_HASH).
import { existsSync } from 'node:fs';
import type { ElfFacts } from '../../../src/scan/static/native/elf';
import { nativeCorpus, type NativeCorpus } from '../../fixtures/native-corpus';
import { SEGMENT_TYPES, factsOf, readelfFacts, type ReadelfFacts } from '../../support/readelf-facts';

/** Our facts in readelf's terms: segment types by name where readelf prints one, imports sorted. */
function asReadelf(f: ElfFacts, names: Record<number, string>): ReadelfFacts {
  return {
    elfClass: f.elfClass, endian: f.endian, machineName: f.machineName,
    segments: f.segments.map((s) => ({ type: names[s.type] ?? '?', offset: s.offset, vaddr: s.vaddr, filesz: s.filesz, memsz: s.memsz, flags: s.flags & 7, align: s.align })),
    dynamic: f.dynamic && { needed: f.dynamic.needed, rpath: f.dynamic.rpath, runpath: f.dynamic.runpath, textrel: f.dynamic.textrel, bindNow: f.dynamic.bindNow },
    symbols: f.symbols && { count: f.symbols.count, imports: [...f.symbols.imports].sort(), definedFunctions: f.symbols.definedFunctions },
  };
}

function normalised(r: ReadelfFacts): ReadelfFacts {
  return {
    ...r,
    segments: r.segments.map((s) => ({ ...s, type: s.type in SEGMENT_TYPES ? s.type : '?' })),
    symbols: r.symbols && { ...r.symbols, imports: [...r.symbols.imports].sort() },
  };
}

const NAMES = Object.fromEntries(Object.entries(SEGMENT_TYPES).map(([k, v]) => [v, k]));
const HOST_LIBRARIES = ['/usr/lib/x86_64-linux-gnu/libz.so.1', '/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libstdc++.so.6'].filter(existsSync);

let corpus: NativeCorpus;
beforeAll(async () => {
  corpus = await nativeCorpus();
}, 300_000);

test('the corpus holds every Android ABI and a big-endian library, and every variant for arm64-v8a and x86_64', () => {
  expect(new Set(corpus.libraries.map((l) => l.abi))).toEqual(new Set(['arm64-v8a', 'armeabi-v7a', 'x86', 'x86_64', 'riscv64', 'aarch64_be']));
  for (const abi of ['arm64-v8a', 'x86_64']) expect(corpus.libraries.filter((l) => l.abi === abi).length).toBeGreaterThanOrEqual(10);
});

test('header, program headers, dynamic section and dynamic symbols equal readelf -lhdW --dyn-syms for every fixture', async () => {
  for (const lib of corpus.libraries) {
    const ours = asReadelf(await factsOf(lib.file), NAMES);
    expect({ name: lib.name, ...ours }).toEqual({ name: lib.name, ...normalised(await readelfFacts(lib.file)) });
  }
});

test('the same for the host\'s shared libraries (GNU ld layouts, DT_HASH and DT_GNU_HASH, versioned symbols)', async () => {
  expect(HOST_LIBRARIES.length).toBeGreaterThan(0);
  for (const file of HOST_LIBRARIES) {
    const ours = asReadelf(await factsOf(file), NAMES);
    expect({ file, ...ours }).toEqual({ file, ...normalised(await readelfFacts(file)) });
  }
});
