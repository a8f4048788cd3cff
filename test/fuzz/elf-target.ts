// Fuzz target and seeds of the ELF reader: untrusted bytes as a native library of an APK, read the way
// analyzeNativeLibraries reads one (random access to its bytes), with the rules run over the facts.
import { readFile } from 'node:fs/promises';
import { readElf } from '../../src/scan/static/native/elf';
import { nativeFindings } from '../../src/scan/static/native/native-rules';
import { nativeCorpus } from '../fixtures/native-corpus';

const NOW = new Date('2026-01-15T12:00:00Z');

export const ELF_TARGET = {
  async run(input: Buffer): Promise<unknown> {
    const facts = await readElf({ size: input.length, read: async (offset, length) => input.subarray(offset, offset + length) });
    return nativeFindings([{ path: 'lib/arm64-v8a/libfuzz.so', abi: 'arm64-v8a', storedOffset: 4096, facts }], { targetSdk: 35, now: NOW }).length;
  },
};

/** Seeds: the hardened library of each ABI and the variants of one, as the compilers and linkers wrote them. */
export async function elfSeeds(): Promise<Buffer[]> {
  const corpus = await nativeCorpus();
  const chosen = corpus.libraries.filter((l) => l.variant === 'hardened' || (l.abi === 'arm64-v8a' && l.variant !== 'large'));
  return Promise.all(chosen.map((l) => readFile(l.file)));
}
