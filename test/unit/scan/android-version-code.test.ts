// Protects: a static scan reads the version code Android gives the installed package, the one device attestation
// reports (src/scan/static/android/version-code.ts): android:versionCode, decimal or hex, with versionCodeMajor as the
// high word, in an APK's binary manifest and in an App Bundle's protobuf one; null when the manifest declares none or
// the code is past 2^53. Never the analyser's own reading as the oracle: `aapt dump badging` prints versionCode='N'
// (the low word, only when above 0; neither aapt nor aapt2 prints the major word), and the typed values `aapt dump
// xmltree` shows are composed here as the platform's PackageInfo.composeLongVersionCode does, in BigInt. A bundle's
// protobuf manifest is read by aapt2 (the tool bundletool hands it to), dumped from a package holding only it.
import { analyzePackage } from '../../../src/scan/static/analyze-package';
import { parseBinaryXml } from '../../../src/scan/static/android/binary-xml';
import { longVersionCode } from '../../../src/scan/static/android/version-code';
import { ANDROID_ATTR_BY_NAME } from '../../../src/scan/static/package/xml-node';
import { FRAMEWORK_RES, androidManifest, buildAab, buildApk, buildZip, cleanupFixtures } from '../../fixtures/build-packages';
import { otherSignersCorpus } from '../../fixtures/other-signers-corpus';
import { run } from '../../support/host-tools';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

/** versionCode='N' of `<tool> dump badging`: N, or '' (absent, 0 or below). */
async function badging(tool: 'aapt' | 'aapt2', file: string): Promise<string> {
  const { stdout } = await run(tool, ['dump', 'badging', file], { maxBuffer: 1 << 24 });
  const printed = /^package: .*? versionCode='(-?\d*)'/m.exec(stdout);
  if (!printed) throw new Error(`${tool} dump badging printed no versionCode for ${file}`);
  return printed[1];
}

/**
 * The long version code from the typed values `<tool> dump xmltree` shows on <manifest>: aapt writes
 * `android:versionCode(0x0101021b)=(type 0x10)0x7`, aapt2 on a protobuf manifest `...:versionCode(0x0101021b)=7`.
 * (major << 32) | (code & 0xffffffff) as Java longs; null without a versionCode or past Number's exact integers.
 */
async function composedFromXmltree(tool: 'aapt' | 'aapt2', file: string): Promise<number | null> {
  const args = tool === 'aapt' ? ['dump', 'xmltree', file, 'AndroidManifest.xml'] : ['dump', 'xmltree', '--file', 'AndroidManifest.xml', file];
  const { stdout } = await run(tool, args, { maxBuffer: 1 << 24 });
  const typed = (id: string) => {
    const m = new RegExp(`\\(${id}\\)=(?:\\(type 0x1[01]\\))?(0x[0-9a-f]+|-?\\d+)\\s*$`, 'm').exec(stdout);
    return m ? BigInt.asIntN(32, BigInt(m[1])) : null;
  };
  const code = typed('0x0101021b');
  if (code === null) return null;
  const long = ((typed('0x01010576') ?? 0n) << 32n) | BigInt.asUintN(32, code);
  return long >= -BigInt(Number.MAX_SAFE_INTEGER) && long <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(long) : null;
}

/** What aapt's badging must print for a code with no major word: the code while it is a positive Java int, else ''. */
const printedByAapt = (code: number | null) => (code !== null && code > 0 && code < 2 ** 31 ? String(code) : '');

/** A bundle's protobuf manifest alone, as the AndroidManifest.xml of a package aapt2 reads. */
async function protoManifestPackage(aab: string): Promise<string> {
  const { stdout } = await run('unzip', ['-p', aab, 'base/manifest/AndroidManifest.xml'], { encoding: 'buffer', maxBuffer: 1 << 24 });
  return buildZip({ 'AndroidManifest.xml': stdout }, 'proto-manifest.apk');
}

const CASES = [
  { code: '7', expected: 7 },
  { code: '2147483647', expected: 2147483647 },
  // Hex compiles to TYPE_INT_HEX.
  { code: '0x2a', expected: 42 },
  { code: '5', major: '3', expected: 3 * 2 ** 32 + 5 },
  // The low word is unsigned in the long: a negative int is the code 2^32 - 5.
  { code: '-5', expected: 2 ** 32 - 5 },
  { code: '1', major: '-1', expected: -(2 ** 32) + 1 },
  { code: '0xffffffff', major: '0x1fffff', expected: Number.MAX_SAFE_INTEGER },
  // 2^53 + 1: no longer exact as a number.
  { code: '1', major: '0x200000', expected: null },
].map((c: { code: string; major?: string; expected: number | null }) => ({ ...c, written: `versionCode="${c.code}"${c.major === undefined ? '' : ` versionCodeMajor="${c.major}"`}` }));

describe('an APK', () => {
  it.each(CASES)('$written reads as aapt reads it', async ({ code, major, expected }) => {
    const apk = await buildApk({ manifest: androidManifest({ packageName: 'com.example.coded', versionCode: code, versionCodeMajor: major }), sign: 'none' });
    const oracle = await composedFromXmltree('aapt', apk);
    expect(oracle).toBe(expected);
    const analysis = await analyzePackage(apk, 'android');
    expect(analysis.target).toEqual({ name: 'com.example.coded', version: '1.2.3', versionCode: oracle });
    if (major === undefined) expect(await badging('aapt', apk)).toBe(printedByAapt(analysis.target.versionCode));
  });

  it('without android:versionCode reads none (null, not the 0 Android would assume)', async () => {
    const source = androidManifest({ packageName: 'com.example.uncoded' }).replace(' android:versionCode="7"', '');
    const apk = await buildApk({ manifest: source, sign: 'none' });
    expect(await badging('aapt', apk)).toBe('');
    expect(await composedFromXmltree('aapt', apk)).toBeNull();
    expect((await analyzePackage(apk, 'android')).target.versionCode).toBeNull();
  });

  it('framework-res.apk, built by the platform\'s own build, reads as aapt prints it', async () => {
    const { stdout: manifest } = await run('unzip', ['-p', FRAMEWORK_RES, 'AndroidManifest.xml'], { encoding: 'buffer', maxBuffer: 1 << 24 });
    const printed = await badging('aapt', FRAMEWORK_RES);
    expect(printed).toMatch(/^[1-9]\d*$/);
    // Its package ("android") is one no app may take, so the analysis refuses it: its manifest is read directly.
    expect(longVersionCode(parseBinaryXml(manifest))).toBe(Number(printed));
  });

  it('the other signers\' corpus (jarsigner, AGP 1.5, apksig 3.1) reads as aapt prints it', async () => {
    const intact = (await otherSignersCorpus()).fixtures.filter((f) => f.base === null);
    expect(intact.length).toBeGreaterThan(5);
    for (const fixture of intact) {
      const { target } = await analyzePackage(fixture.file, 'android');
      expect({ [fixture.name]: printedByAapt(target.versionCode) }).toEqual({ [fixture.name]: await badging('aapt', fixture.file) });
    }
  });

  it('reads the attributes by the ids the platform gives them (framework-res.apk\'s public attributes)', async () => {
    const { stdout } = await run('aapt', ['dump', 'resources', FRAMEWORK_RES], { maxBuffer: 1 << 26 });
    for (const name of ['versionCode', 'versionCodeMajor']) {
      const id = new RegExp(`resource (0x[0-9a-f]{8}) android:attr/${name}:`).exec(stdout)?.[1];
      expect({ [name]: ANDROID_ATTR_BY_NAME.get(name) }).toEqual({ [name]: Number(id) });
    }
  });
});

describe('an App Bundle', () => {
  it.each(CASES)('$written reads as aapt2 reads its protobuf manifest', async ({ code, major, expected }) => {
    const aab = await buildAab({ manifest: androidManifest({ packageName: 'com.example.bundled', versionCode: code, versionCodeMajor: major }), sign: 'none' });
    const proto = await protoManifestPackage(aab);
    const oracle = await composedFromXmltree('aapt2', proto);
    expect(oracle).toBe(expected);
    const analysis = await analyzePackage(aab, 'android');
    expect(analysis.target).toEqual({ name: 'com.example.bundled', version: '1.2.3', versionCode: oracle });
    if (major === undefined) expect(await badging('aapt2', proto)).toBe(printedByAapt(analysis.target.versionCode));
  });
});
