// The native library rules on the corpus: which rules fire on each library is computed from readelf's facts, and
// each fixture fires the rule its missing flag names while its hardened twin fires none.
import { FORTIFIABLE, nativeFindings, type AnalyzedLibrary } from '../../../src/scan/static/native/native-rules';
import { nativeCorpus, type NativeCorpus, type NativeFixture } from '../../fixtures/native-corpus';
import { factsOf, readelfFacts, type ReadelfFacts } from '../../support/readelf-facts';

/** What each rule means, read off readelf's output (docs/scan-evidence.md, "What the package contains"). */
function expectedIds(r: ReadelfFacts, abi: string): string[] {
  const seg = (t: string) => r.segments.filter((s) => s.type === t);
  const imports = r.symbols?.imports ?? [];
  const hasCode = seg('LOAD').some((s) => s.flags & 1 && s.filesz > 0) && (r.symbols?.definedFunctions ?? 0) > 0;
  const ids: [string, boolean][] = [
    ['android.native-executable-stack', seg('GNU_STACK').length === 0 || (seg('GNU_STACK')[0].flags & 1) !== 0],
    ['android.native-text-relocations', !!r.dynamic?.textrel],
    ['android.native-no-stack-protector', hasCode && !imports.some((n) => n === '__stack_chk_fail' || n === '__stack_chk_guard')],
    ['android.native-no-relro', !!r.dynamic && seg('GNU_RELRO').length === 0],
    ['android.native-partial-relro', !!r.dynamic && seg('GNU_RELRO').length > 0 && !r.dynamic.bindNow],
    ['android.native-no-fortify', imports.some((n) => FORTIFIABLE.has(n)) && !imports.some((n) => /^__\w+_chk$/.test(n))],
    ['android.native-rpath', !!r.dynamic && (r.dynamic.rpath !== null || r.dynamic.runpath !== null)],
    ['android.native-16kb-alignment', ['arm64-v8a', 'x86_64'].includes(abi) && seg('LOAD').some((s) => s.align < 16384)],
  ];
  return ids.filter(([, fires]) => fires).map(([id]) => id).sort();
}

/** The rule a variant's missing flag should fire (none for the hardened build and the data-only library). */
const VARIANT_RULE: Record<string, string | null> = {
  hardened: null, 'data-only': null, large: null, execstack: 'android.native-executable-stack', textrel: 'android.native-text-relocations',
  'no-stack-protector': 'android.native-no-stack-protector', 'no-relro': 'android.native-no-relro', 'partial-relro': 'android.native-partial-relro',
  'no-fortify': 'android.native-no-fortify', rpath: 'android.native-rpath', runpath: 'android.native-rpath', 'page-4k': 'android.native-16kb-alignment',
};

const NOW = new Date('2026-01-15T00:00:00Z');
let corpus: NativeCorpus;
beforeAll(async () => {
  corpus = await nativeCorpus();
}, 300_000);

async function analyzed(lib: NativeFixture): Promise<AnalyzedLibrary> {
  return { path: `lib/${lib.abi}/lib${lib.variant}.so`, abi: lib.abi, storedOffset: null, facts: await factsOf(lib.file) };
}

test('on every library, the rules that fire are those readelf\'s facts call for', async () => {
  for (const lib of corpus.libraries) {
    const fired = nativeFindings([await analyzed(lib)], { targetSdk: 35, now: NOW }).map((f) => f.id).sort();
    expect({ lib: lib.name, fired }).toEqual({ lib: lib.name, fired: expectedIds(await readelfFacts(lib.file), lib.abi) });
  }
});

test('each fixture fires the rule of the flag it lacks, and its hardened twin fires nothing', async () => {
  for (const lib of corpus.libraries) {
    const fired = nativeFindings([await analyzed(lib)], { targetSdk: 35, now: NOW }).map((f) => f.id);
    const rule = VARIANT_RULE[lib.variant];
    const applies = rule !== 'android.native-16kb-alignment' || ['arm64-v8a', 'x86_64'].includes(lib.abi);
    expect({ lib: lib.name, fired }).toEqual({ lib: lib.name, fired: rule && applies ? [rule] : [] });
  }
});

test('one finding per rule names every library with its ABI, listing eight and counting the rest', async () => {
  const lib = corpus.libraries.find((l) => l.name === 'arm64-v8a/execstack') as NativeFixture;
  const one = await analyzed(lib);
  const many = Array.from({ length: 11 }, (_, i) => ({ ...one, path: `lib/arm64-v8a/lib${i}.so` }));
  const [finding] = nativeFindings(many, { targetSdk: 35, now: NOW });
  expect(finding).toMatchObject({ id: 'android.native-executable-stack', severity: 'high' });
  expect(finding.detail).toContain('11 libraries: lib/arm64-v8a/lib0.so (arm64-v8a: PT_GNU_STACK is RWX)');
  expect(finding.detail).toContain('and 3 more');
  expect(finding.detail).not.toContain('lib8.so');
  expect(finding.fix).toContain('-Wl,-z,noexecstack');
});

test('16 KB alignment: high from 2025-11-01 at targetSdk 35 and later, medium before that date or below 35', async () => {
  const lib = await analyzed(corpus.libraries.find((l) => l.name === 'arm64-v8a/page-4k') as NativeFixture);
  const severity = (now: string, targetSdk: number) =>
    nativeFindings([lib], { targetSdk, now: new Date(now) }).find((f) => f.id === 'android.native-16kb-alignment')?.severity;
  expect(severity('2025-10-31T23:59:59Z', 35)).toBe('medium');
  expect(severity('2025-11-01T00:00:00Z', 35)).toBe('high');
  expect(severity('2025-11-01T00:00:00Z', 34)).toBe('medium');
  expect(severity('2026-06-01T00:00:00Z', 36)).toBe('high');
  const fix = nativeFindings([lib], { targetSdk: 35, now: NOW }).find((f) => f.id === 'android.native-16kb-alignment')?.fix ?? '';
  for (const step of ['NDK r28', '-Wl,-z,max-page-size=16384', 'AGP 8.5.1', 'useLegacyPackaging = false']) expect(fix).toContain(step);
});
