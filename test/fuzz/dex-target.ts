// Fuzz target and seeds of the DEX reader: untrusted bytes as a classes.dex, read the way the secret scan reads
// one (every string, then every type descriptor and its package), with the secret rules run over the strings.
import { readFile } from 'node:fs/promises';
import { DexStrings, descriptorPackage } from '../../src/scan/static/dex/dex-strings';
import { SecretCollector } from '../../src/scan/static/secrets/collector';
import { dexCorpus } from '../fixtures/dex-corpus';

export const DEX_TARGET = {
  run(input: Buffer): unknown {
    const dex = new DexStrings(input);
    const collector = new SecretCollector();
    let strings = 0;
    for (const s of dex.strings()) {
      collector.scan('classes.dex', s);
      strings++;
    }
    const packages = new Set<string | null>();
    for (const d of dex.typeDescriptors()) packages.add(descriptorPackage(d));
    return [strings, packages.size, collector.findings().length];
  },
};

/** Seeds: the smali and D8 files of the DEX corpus (every MUTF-8 form), not the large D8 output of real jars. */
export async function dexSeeds(): Promise<Buffer[]> {
  const corpus = await dexCorpus();
  return Promise.all(corpus.fixtures.map((f) => readFile(f.file)));
}
