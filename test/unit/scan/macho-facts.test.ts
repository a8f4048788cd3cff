// Protects: the Mach-O reader's hardening facts agree with LLVM's tools on every file of the corpus built by clang,
// ld64.lld and llvm-lipo (thin and fat): per architecture, MH_PIE and the file type (llvm-otool -hv), the __text size,
// Objective-C class lists, linked dylibs and build version (llvm-otool -l), the undefined symbols (llvm-nm -u); and
// the file's digest is taken during the reader's last pass, equal to sha256sum's.
import { readFile } from 'node:fs/promises';
import { MH_EXECUTE, readMachoFacts } from '../../../src/scan/static/macho/hardening';
import type { ByteSource } from '../../../src/scan/static/macho/macho';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { digestingEntryBytes } from '../../../src/scan/static/ios/entry-bytes';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { buildZip, cleanupFixtures } from '../../fixtures/build-packages';
import { machoCorpus, type MachoCorpus } from '../../fixtures/macho-corpus';
import { otoolFacts } from '../../support/otool-facts';
import { run } from '../../support/host-tools';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

let corpus: MachoCorpus;
beforeAll(async () => {
  corpus = await machoCorpus();
});

/** A file in memory as a ByteSource. */
function bufferSource(buf: Buffer): ByteSource {
  return { size: buf.length, ranges: async (rs) => rs.map(([s, e]) => Buffer.from(buf.subarray(Math.min(s, buf.length), Math.min(e, buf.length)))) };
}

/** otool prints `15.0` for 15.0.0 and `15.0.1` otherwise. */
const otoolVersion = (v: string) => v.replace(/\.0$/, '');
const FILETYPES: Record<number, string> = { 2: 'EXECUTE', 6: 'DYLIB' };

describe('Mach-O facts against llvm-otool and llvm-nm', () => {
  it('covers every fixture of the corpus, thin and fat', () => {
    expect(corpus.fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(['hardened', 'no-stack-protector', 'no-pie', 'objc-arc', 'objc-mrc', 'links-corelocation', 'links-avfoundation-camera',
    'links-avfoundation-playback', 'framework-dylib', 'fat-hardened', 'fat-mixed'])('%s', async (name) => {
    const f = corpus.fixtures.find((x) => x.name === name);
    if (!f) throw new Error(`corpus has no ${name}`);
    const oracle = await otoolFacts(f.file);
    // Watch every name nm lists, and a decoy no file imports: what is read back must be exactly nm's list.
    const watched = new Set([...oracle.flatMap((o) => o.undefined), '_decoy_never_imported']);
    const facts = await readMachoFacts(bufferSource(await readFile(f.file)), watched);
    expect(facts.map((s) => s.arch).sort()).toEqual(oracle.map((o) => o.arch).sort());
    for (const o of oracle) {
      const s = facts.find((x) => x.arch === o.arch);
      expect(s).toBeDefined();
      if (!s) continue;
      expect(FILETYPES[s.filetype]).toBe(o.filetype);
      expect(s.pie).toBe(o.pie);
      expect(s.codeBytes).toBe(o.codeBytes);
      expect(s.objcClasses).toBe(o.objcClasses);
      expect(s.dylibs.map((d) => d.name)).toEqual(o.dylibs);
      expect(s.build && otoolVersion(s.build.minos)).toBe(o.minos);
      expect(s.build && otoolVersion(s.build.sdk)).toBe(o.sdk);
      expect(s.undefinedSymbols).toBe(o.undefined.length);
      expect(s.imports).toEqual([...o.undefined].sort());
    }
  });

  it('sees the hardening choices the twins differ by', async () => {
    const facts = async (name: string) => readMachoFacts(bufferSource(await readFile(corpus.fixtures.find((x) => x.name === name)!.file)), new Set(['___stack_chk_fail']));
    expect((await facts('hardened'))[0]).toMatchObject({ pie: true, filetype: MH_EXECUTE, imports: ['___stack_chk_fail'] });
    expect((await facts('no-pie'))[0].pie).toBe(false);
    expect((await facts('no-stack-protector'))[0].imports).toEqual([]);
  });
});

describe('the file digest, taken during the last pass', () => {
  it('equals sha256sum of each file, thin and fat', async () => {
    const names = ['hardened', 'fat-mixed', 'framework-dylib'];
    const files = names.map((n) => corpus.fixtures.find((x) => x.name === n)!.file);
    const zipFile = await buildZip(Object.fromEntries(await Promise.all(files.map(async (f, k) => [`bin/${names[k]}`, await readFile(f)] as const))));
    const zip = await PackageZip.open(zipFile, () => true);
    try {
      for (const [k, name] of names.entries()) {
        const expected = (await run('sha256sum', [files[k]])).stdout.split(' ')[0];
        const src = digestingEntryBytes(zip, `bin/${name}`, 'sealFileBytes', LIMITS.sealFileBytes);
        let streamed = 0;
        const stream = zip.stream.bind(zip);
        // Counts the passes that reach the end of the entry: the reader's last one, which the digest shares.
        zip.stream = (async (...args: Parameters<typeof zip.stream>) => {
          const [n, kind, max, onChunk] = args;
          return stream(n, kind, max, (chunk, offset) => {
            const more = onChunk(chunk, offset);
            if (offset + chunk.length === src.size && more !== false) streamed++;
            return more;
          });
        }) as typeof zip.stream;
        await readMachoFacts(src, new Set());
        expect(streamed).toBe(1);
        expect(await src.sha256()).toBe(expected);
        expect(streamed).toBe(1);
        zip.stream = stream;
      }
    } finally {
      zip.close();
    }
  });
});
