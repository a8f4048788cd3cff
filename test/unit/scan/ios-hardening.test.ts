// Protects: ios.binary-no-pie, ios.binary-no-stack-protector and ios.binary-no-arc fire on IPAs whose executable (or
// framework) was built without the protection, naming file and architecture, and stay quiet on the hardened twin;
// whether each fires agrees with what llvm-otool and llvm-nm say of the file. The inventory lists every Mach-O file
// and architecture with the SHA-256 sha256sum gives, and the embedded frameworks' names.
import { readFile } from 'node:fs/promises';
import { analyzeIos, isIosEntry } from '../../../src/scan/static/ios/analyze-ios';
import { MIN_CODE_FOR_STACK_PROTECTOR } from '../../../src/scan/static/ios/hardening-rules';
import { PackageZip } from '../../../src/scan/static/package/zip-reader';
import { buildIpa, cleanupFixtures, xmlPlist } from '../../fixtures/build-packages';
import { machoCorpus, type MachoCorpus } from '../../fixtures/macho-corpus';
import { otoolFacts } from '../../support/otool-facts';
import { expectWellFormed, ids, NOW, only, scan } from './helpers';
import { run } from '../../support/host-tools';

jest.setTimeout(180_000);
afterAll(cleanupFixtures);

const INFO = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0', MinimumOSVersion: '16.0' };
const EXE = 'Payload/Example.app/Example';
let corpus: MachoCorpus;
beforeAll(async () => {
  corpus = await machoCorpus();
});

const file = (name: string) => corpus.fixtures.find((f) => f.name === name)?.file ?? '';
const framework = async (name: string) => ({
  'Frameworks/Foo.framework/Info.plist': xmlPlist({ CFBundleIdentifier: 'com.example.foo', CFBundleExecutable: 'Foo', CFBundlePackageType: 'FMWK' }),
  'Frameworks/Foo.framework/Foo': await readFile(file(name)),
});
/** A signed IPA whose main executable is the corpus file `exe`. */
async function ipa(exe: string, resources: Record<string, string | Buffer> = {}): Promise<string> {
  return buildIpa({ infoPlist: INFO, binary: true, resources: { Example: await readFile(file(exe)), ...resources } });
}

/** What the tools say each rule should find in a file: the architectures lacking the protection. */
async function oracle(name: string): Promise<Record<'pie' | 'ssp' | 'arc', string[]>> {
  const slices = await otoolFacts(file(name));
  const has = (o: (typeof slices)[number], names: string[]) => o.undefined.some((u) => names.includes(u));
  return {
    pie: slices.filter((o) => o.filetype === 'EXECUTE' && !o.pie).map((o) => o.arch),
    ssp: slices.filter((o) => o.codeBytes >= MIN_CODE_FOR_STACK_PROTECTOR && !has(o, ['___stack_chk_fail', '___stack_chk_guard'])).map((o) => o.arch),
    arc: slices.filter((o) => (o.objcClasses || has(o, ['_objc_msgSend'])) && !has(o, ['_objc_release', '_objc_retain', '_objc_storeStrong', '_swift_release'])).map((o) => o.arch),
  };
}

const RULES = { pie: 'ios.binary-no-pie', ssp: 'ios.binary-no-stack-protector', arc: 'ios.binary-no-arc' } as const;

describe('hardening rules on the main executable, each with its twin', () => {
  it.each([
    ['no-pie', 'hardened', 'pie'],
    ['no-stack-protector', 'hardened', 'ssp'],
    ['objc-mrc', 'objc-arc', 'arc'],
    ['fat-mixed', 'fat-hardened', 'pie'],
    ['fat-mixed', 'fat-hardened', 'ssp'],
  ] as const)('%s fires, %s does not (%s)', async (weak, twin, rule) => {
    const expected = await oracle(weak);
    expect(expected[rule].length).toBeGreaterThan(0);
    expect((await oracle(twin))[rule]).toEqual([]);
    const r = await scan(await ipa(weak), 'ios');
    expectWellFormed(r);
    const f = only(r, RULES[rule]);
    expect(f.severity).toBe({ pie: 'high', ssp: 'medium', arc: 'low' }[rule]);
    for (const arch of expected[rule]) expect(f.detail).toContain(`${EXE} (${arch})`);
    // A fat file names only the architecture that lacks the protection.
    const fine = (await otoolFacts(file(weak))).map((o) => o.arch).filter((a) => !expected[rule].includes(a));
    for (const arch of fine) expect(f.detail).not.toContain(`${EXE} (${arch})`);
    expect(ids(await scan(await ipa(twin), 'ios'))).not.toContain(RULES[rule]);
  });

  it('a hardened executable raises none of the three', async () => {
    const r = await scan(await ipa('hardened'), 'ios');
    expect(ids(r)).toEqual([]);
  });

  it('names a framework built without stack protector, not the hardened app that embeds it', async () => {
    expect((await oracle('framework-dylib')).ssp).toEqual(['arm64']);
    const f = only(await scan(await ipa('hardened', await framework('framework-dylib')), 'ios'), RULES.ssp);
    expect(f.detail).toContain('Payload/Example.app/Frameworks/Foo.framework/Foo (arm64)');
    expect(f.detail).not.toContain(`${EXE} (`);
  });
});

describe('inventory', () => {
  it('lists every Mach-O file and architecture with sha256sum\'s digest, and the frameworks', async () => {
    const appex = {
      'PlugIns/Share.appex/Info.plist': xmlPlist({ CFBundleIdentifier: 'com.example.app.share', CFBundleExecutable: 'Share', CFBundlePackageType: 'XPC!' }),
      'PlugIns/Share.appex/Share': await readFile(file('hardened')),
    };
    const ipaFile = await ipa('fat-mixed', { ...(await framework('framework-dylib')), 'Frameworks/libswiftStub.dylib': await readFile(file('framework-dylib')), ...appex });
    const zip = await PackageZip.open(ipaFile, isIosEntry);
    let inventory;
    try {
      inventory = (await analyzeIos(zip, ipaFile, NOW)).inventory;
    } finally {
      zip.close();
    }
    const { stdout } = await run('unzip', ['-Z1', ipaFile]);
    const expected = [];
    for (const name of stdout.split('\n').filter(Boolean)) {
      const bytes = (await run('unzip', ['-p', ipaFile, name], { encoding: 'buffer', maxBuffer: 64 << 20 })).stdout;
      const lipo = await run('sh', ['-c', `unzip -p '${ipaFile}' '${name}' > /tmp/inv-$$ && llvm-lipo-14 -archs /tmp/inv-$$; s=$?; rm -f /tmp/inv-$$; exit $s`]).catch(() => null);
      if (!lipo || bytes.length === 0) continue; // not a Mach-O: llvm-lipo refuses it
      const sha256 = (await run('sh', ['-c', `unzip -p '${ipaFile}' '${name}' | sha256sum`])).stdout.split(' ')[0];
      for (const abi of lipo.stdout.trim().split(/\s+/)) expected.push({ path: name, abi, sha256 });
    }
    const key = (e: { path: string; abi: string }) => `${e.path} ${e.abi}`;
    expect(expected.length).toBe(5);
    expect([...inventory.nativeLibraries].sort((a, b) => key(a).localeCompare(key(b)))).toEqual(expected.sort((a, b) => key(a).localeCompare(key(b))));
    expect(inventory.frameworks).toEqual(['Foo']);
  });
});
