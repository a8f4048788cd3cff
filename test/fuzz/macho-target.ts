// Fuzz target and seeds of the Mach-O reader: untrusted bytes as an executable of an IPA, read the way the iOS
// analysis reads one (header, load commands, then symbol and string tables by ranges), with the rules run over the
// facts.
import { readFile } from 'node:fs/promises';
import { readMachoFacts } from '../../src/scan/static/macho/hardening';
import { HARDENING_SYMBOLS, hardeningFindings } from '../../src/scan/static/ios/hardening-rules';
import { PURPOSE_SYMBOLS, usageDescriptionFindings } from '../../src/scan/static/ios/usage-descriptions';
import { machoCorpus } from '../fixtures/macho-corpus';

const WATCHED = new Set([...HARDENING_SYMBOLS, ...PURPOSE_SYMBOLS]);

export const MACHO_TARGET = {
  async run(input: Buffer): Promise<unknown> {
    const source = { size: input.length, ranges: async (rs: ReadonlyArray<readonly [number, number]>) => rs.map(([s, e]) => input.subarray(Math.min(s, input.length), Math.min(e, input.length))) };
    const slices = await readMachoFacts(source, WATCHED);
    const binaries = [{ path: 'Payload/Fuzz.app/Fuzz', role: 'main' as const, slices, sha256: '' }];
    return hardeningFindings(binaries).length + usageDescriptionFindings(binaries, {}, 'Payload/Fuzz.app/Info.plist').length;
  },
};

/** Seeds: thin and fat executables, Objective-C with and without ARC, a framework dylib, as clang and ld64.lld wrote them. */
export async function machoSeeds(): Promise<Buffer[]> {
  const corpus = await machoCorpus();
  const chosen = ['hardened', 'no-pie', 'objc-mrc', 'links-avfoundation-camera', 'framework-dylib', 'fat-mixed'];
  return Promise.all(corpus.fixtures.filter((f) => chosen.includes(f.name)).map((f) => readFile(f.file)));
}
