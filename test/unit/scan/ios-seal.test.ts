// Protects: the iOS seal checked as codesign does, on bundles signed by rcodesign: a signed IPA verifies and names
// its team and signer as openssl reads the certificate; every change after signing (a resource changed, removed or
// added, Info.plist, CodeResources, a stripped signature, a patched code page, a broken CMS signature) is a
// critical ios.seal-broken naming the file, where rcodesign's own verify (which checks executables) agrees.
import { appendFile, copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildIpa, cleanupFixtures, iosExecutable, iosSigningIdentity, IOS_TEAM_ID, rcodesignVerify, xmlPlist, type IpaOptions } from '../../fixtures/build-packages';
import { ids, only, scan } from './helpers';
import type { IosSigning } from '../../../src/scan/model/types';
import { LimitExceededError } from '../../../src/scan/static/package/errors';
import { checkCms } from '../../../src/scan/static/ios/cms-signer';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { PosixRegex } from '../../../src/scan/static/ios/posix-regex';
import { CodePageChecker } from '../../../src/scan/static/macho/code-pages';
import { bestCodeDirectory, parseEmbeddedSignature } from '../../../src/scan/static/macho/code-signature';
import { MachoError, readSlices, type ByteSource } from '../../../src/scan/static/macho/macho';
import { run } from '../../support/host-tools';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const INFO = { CFBundleIdentifier: 'com.example.app', CFBundleShortVersionString: '1.0', MinimumOSVersion: '16.0' };
const RESOURCES = {
  'asset.txt': 'hello\n',
  'images/logo.png': Buffer.alloc(3000, 7),
  // Sealed as optional by Apple's rules: its absence is allowed.
  'en.lproj/Localizable.strings': '"a" = "b";\n',
};

/** Builds an IPA, running `tamper` on the signed .app; `exe` is a copy of its executable for rcodesign to verify. */
async function ipa(tamper?: (app: string) => Promise<void>, extra: Partial<IpaOptions> = {}): Promise<{ file: string; exe: string }> {
  let exe = '';
  const file = await buildIpa({
    infoPlist: INFO, binary: true, resources: RESOURCES, ...extra,
    tamper: async (app) => {
      await tamper?.(app);
      exe = path.join(path.dirname(path.dirname(path.dirname(app))), 'Example.macho');
      await copyFile(path.join(app, 'Example'), exe);
    },
  });
  return { file, exe };
}

async function flipByte(file: string, offset: number): Promise<void> {
  const bytes = await readFile(file);
  bytes[offset] ^= 0xff;
  await writeFile(file, bytes);
}

function broken(r: Awaited<ReturnType<typeof scan>>): string {
  const f = only(r, 'ios.seal-broken');
  expect(f.severity).toBe('critical');
  return f.detail;
}

describe('a bundle signed by rcodesign', () => {
  it('verifies and names the team and signer as openssl reads the certificate', async () => {
    const { file, exe } = await ipa();
    expect(await rcodesignVerify(exe)).toBe(true);
    const r = await scan(file, 'ios');
    expect(ids(r)).toEqual([]);
    const id = await iosSigningIdentity();
    const sha256 = (await run('sh', ['-c', `openssl x509 -in '${id.certPem}' -outform DER | openssl dgst -sha256 -r`])).stdout.split(' ')[0];
    const ou = (await run('openssl', ['x509', '-in', id.certPem, '-noout', '-subject', '-nameopt', 'sep_multiline,sname'])).stdout
      .split('\n').map((l) => l.trim()).find((l) => l.startsWith('OU='))?.slice(3);
    const enddate = (await run('openssl', ['x509', '-in', id.certPem, '-noout', '-enddate'])).stdout.trim().replace(/^notAfter=/, '');
    const signing = r.signing as IosSigning;
    expect(signing.verified).toBe(true);
    expect(ou).toBe(IOS_TEAM_ID);
    expect(signing.teamId).toBe(ou);
    expect(signing.signers).toHaveLength(1);
    expect(signing.signers[0].sha256).toBe(sha256);
    expect(signing.signers[0].subject).toContain(`OU=${IOS_TEAM_ID}`);
    expect(new Date(signing.signers[0].notAfter).getTime()).toBe(new Date(enddate).getTime());
  });

  it('verifies a fat executable, every slice', async () => {
    const { file, exe } = await ipa(undefined, { fat: true });
    expect(await rcodesignVerify(exe)).toBe(true);
    const r = await scan(file, 'ios');
    expect(ids(r)).toEqual([]);
    expect((r.signing as IosSigning).verified).toBe(true);
  });

  it('allows an optional file to be missing and a file the rules omit to be added', async () => {
    const r = await scan((await ipa(async (app) => {
      await rm(path.join(app, 'en.lproj', 'Localizable.strings'));
      await writeFile(path.join(app, '.DS_Store'), 'finder');
    })).file, 'ios');
    expect(ids(r)).toEqual([]);
    expect((r.signing as IosSigning).verified).toBe(true);
  });
});

describe('a bundle with an embedded framework', () => {
  // iOS rules seal a framework's files one by one in the app's files2 (the framework signed first, by rcodesign).
  const withFramework = async (tamper?: (app: string) => Promise<void>) => {
    const macho = await readFile(await iosExecutable('arm64'));
    return ipa(tamper, { resources: { ...RESOURCES,
      'Frameworks/Foo.framework/Info.plist': xmlPlist({ CFBundleIdentifier: 'com.example.foo', CFBundleExecutable: 'Foo', CFBundlePackageType: 'FMWK' }),
      'Frameworks/Foo.framework/Foo': macho,
    } });
  };

  it('verifies, and names the framework executable patched after signing', async () => {
    expect(ids(await scan((await withFramework()).file, 'ios'))).toEqual([]);
    const patched = await scan((await withFramework((app) => flipByte(path.join(app, 'Frameworks', 'Foo.framework', 'Foo'), 0x4000))).file, 'ios');
    expect(broken(patched)).toContain('Payload/Example.app/Frameworks/Foo.framework/Foo: contents differ from the seal');
  });
});

describe('a bundle with a symbolic link', () => {
  it('verifies the link by its target, and names it when the target changed', async () => {
    const symlinks = { 'current.txt': 'asset.txt' };
    expect(ids(await scan((await ipa(undefined, { symlinks })).file, 'ios'))).toEqual([]);
    const moved = await ipa(async (app) => {
      await rm(path.join(app, 'current.txt'));
      await symlink('images/logo.png', path.join(app, 'current.txt'));
    }, { symlinks });
    expect(broken(await scan(moved.file, 'ios'))).toContain('Payload/Example.app/current.txt: symbolic link target differs from its seal');
  });
});

describe('a seal broken after signing', () => {
  it('names a resource whose contents changed', async () => {
    const r = await scan((await ipa((app) => appendFile(path.join(app, 'images', 'logo.png'), 'x'))).file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/images/logo.png: contents differ from the seal');
    expect((r.signing as IosSigning).verified).toBe(false);
    expect((r.signing as IosSigning).teamId).toBe(IOS_TEAM_ID);
  });

  it('names a sealed file that was removed', async () => {
    const r = await scan((await ipa((app) => rm(path.join(app, 'asset.txt')))).file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/asset.txt: sealed file is missing');
  });

  it('names a file added after signing that the rules would seal', async () => {
    const r = await scan((await ipa((app) => writeFile(path.join(app, 'images', 'payload.js'), 'evil()'))).file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/images/payload.js: added after signing');
  });

  it('names Info.plist when it changed', async () => {
    const r = await scan((await ipa(async (app) => {
      await writeFile(path.join(app, 'Info.plist'), xmlPlist({ CFBundleExecutable: 'Example', ...INFO, CFBundleIdentifier: 'com.evil.app' }));
    })).file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/Info.plist: changed after signing');
  });

  it('names CodeResources when it changed', async () => {
    const r = await scan((await ipa((app) => appendFile(path.join(app, '_CodeSignature', 'CodeResources'), '\n'))).file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/_CodeSignature/CodeResources: changed after signing');
  });

  it('names the executable when its signature was stripped, as rcodesign does', async () => {
    const unsigned = await iosExecutable('arm64');
    const { file, exe } = await ipa((app) => copyFile(unsigned, path.join(app, 'Example')));
    expect(await rcodesignVerify(exe)).toBe(false);
    expect(broken(await scan(file, 'ios'))).toContain('Payload/Example.app/Example: no code signature (LC_CODE_SIGNATURE missing)');
  });

  it('names the executable and the page when a code page changed, as rcodesign does', async () => {
    // Byte 0x4000 is the first byte of page 4 (4 KiB pages): inside __TEXT, well before the signature.
    const { file, exe } = await ipa((app) => flipByte(path.join(app, 'Example'), 0x4000));
    expect(await rcodesignVerify(exe)).toBe(false);
    expect(broken(await scan(file, 'ios'))).toMatch(/Payload\/Example\.app\/Example: code page 4 of \d+ does not match its signed hash/);
  });

  it('names the architecture of a fat executable whose second slice was patched', async () => {
    const { file, exe } = await ipa(async (app) => {
      const bytes = await readFile(path.join(app, 'Example'));
      // fat_arch[1].offset (big-endian) in the fat header, then a byte in that slice's second page.
      await flipByte(path.join(app, 'Example'), bytes.readUInt32BE(8 + 20 + 8) + 0x1000);
    }, { fat: true });
    expect(await rcodesignVerify(exe)).toBe(false);
    expect(broken(await scan(file, 'ios'))).toMatch(/Example: code page 1 of \d+ \(architecture 1\) does not match/);
  });

  it('names the executable when its CMS signature does not verify', async () => {
    const { file, exe } = await ipa(async (app) => {
      const bytes = await readFile(path.join(app, 'Example'));
      // The CMS blob (magic 0xfade0b01) ends with the signer's signature value; change its last byte.
      const at = bytes.indexOf(Buffer.from([0xfa, 0xde, 0x0b, 0x01]));
      await flipByte(path.join(app, 'Example'), at + bytes.readUInt32BE(at + 4) - 1);
    });
    expect(await rcodesignVerify(exe)).toBe(false);
    const r = await scan(file, 'ios');
    expect(broken(r)).toContain('Payload/Example.app/Example: CMS signature does not verify');
    expect((r.signing as IosSigning).verified).toBe(false);
  });
});

describe('a hostile seal', () => {
  it('ends quickly with a finding when rules2 holds a pattern that would backtrack', async () => {
    const r = await scan((await ipa(async (app) => {
      const evil = { '^(a*)*(a|a)*.*.*.*.*.*b$': true, '^.*': true };
      await writeFile(path.join(app, '_CodeSignature', 'CodeResources'), xmlPlist({ files2: { 'asset.txt': { hash2: Buffer.alloc(32) } }, rules2: evil }));
      await writeFile(path.join(app, `${'a'.repeat(200)}`), 'x');
    })).file, 'ios');
    expect(broken(r)).toContain('CodeResources: changed after signing');
  });

  it('reports an invalid rule, a garbage signature and a truncated executable as a broken seal, not a crash', async () => {
    const bad = await scan((await ipa((app) => writeFile(path.join(app, '_CodeSignature', 'CodeResources'), xmlPlist({ files2: {}, rules2: { '(': true } })))).file, 'ios');
    expect(broken(bad)).toContain('is not a valid regular expression');
    const truncated = await scan((await ipa(async (app) => {
      const bytes = await readFile(path.join(app, 'Example'));
      await writeFile(path.join(app, 'Example'), bytes.subarray(0, bytes.length - 3000));
    })).file, 'ios');
    expect(broken(truncated)).toContain('Payload/Example.app/Example: code signature unreadable');
  });
});

describe('the seal caps', () => {
  const incomplete = (r: Awaited<ReturnType<typeof scan>>, limit: string) => expect(only(r, 'scan.incomplete').detail).toContain(`"${limit}"`);

  it('match a rule in steps linear in the path, whatever the pattern', () => {
    const budget = { steps: 0 };
    expect(new PosixRegex('^(a*)*(a|a)*.*.*.*.*.*b$').test('a'.repeat(5000), budget)).toBe(false);
    // A backtracking engine takes exponential time here; the automaton a few steps per character.
    expect(budget.steps).toBeLessThan(5000 * 20);
  });

  it('end a bundle path longer than PATH_MAX with scan.incomplete naming the cap', async () => {
    const deep = `${'d/'.repeat(LIMITS.sealPathLength / 2)}x`;
    incomplete(await scan((await ipa(async (app) => {
      await mkdir(path.dirname(path.join(app, deep)), { recursive: true });
      await writeFile(path.join(app, deep), 'x');
    })).file, 'ios'), 'sealPathLength');
  });

  it('end CodeResources with more rules than the cap with scan.incomplete naming it', async () => {
    const rules2 = Object.fromEntries(Array.from({ length: LIMITS.sealRules + 1 }, (_, k) => [`^r${k}$`, true]));
    incomplete(await scan((await ipa((app) => writeFile(path.join(app, '_CodeSignature', 'CodeResources'), xmlPlist({ files2: {}, rules2 })))).file, 'ios'), 'sealRules');
  });

  it('refuse a Mach-O header declaring more load commands than the cap', async () => {
    const header = Buffer.alloc(32);
    header.writeUInt32LE(0xfeedfacf, 0);
    header.writeUInt32LE(LIMITS.machoLoadCommands + 1, 16);
    await expect(readSlices({ size: 32, ranges: async (r) => r.map(([a, b]) => header.subarray(a, b)) })).rejects.toThrow(LimitExceededError);
  });
});

describe('the Mach-O and signature readers on mutated executables', () => {
  const source = (bytes: Buffer): ByteSource => ({
    size: bytes.length,
    ranges: async (ranges) => ranges.map(([start, end]) => bytes.subarray(Math.min(start, bytes.length), Math.min(end, bytes.length))),
  });

  /** Everything the seal reads from an executable; only MachoError and LimitExceededError may escape. */
  async function readAll(bytes: Buffer): Promise<void> {
    const src = source(bytes);
    const slices = await readSlices(src);
    for (const slice of slices) {
      if (!slice.codeSignature) continue;
      const { dataoff, datasize } = slice.codeSignature;
      const [blob] = await src.ranges([[slice.offset + dataoff, slice.offset + dataoff + datasize]]);
      const sig = parseEmbeddedSignature(blob);
      const cd = bestCodeDirectory(sig);
      const pages = new CodePageChecker([{ sliceOffset: slice.offset, sliceSize: slice.size, cd }]);
      pages.update(bytes, 0);
      pages.results();
      if (sig.cms) checkCms(sig.cms, sig, cd);
    }
  }

  it('turn every mutation into a verdict or a reader error, never a crash', async () => {
    const { exe } = await ipa(undefined, { fat: true });
    const original = await readFile(exe);
    await expect(readAll(original)).resolves.toBeUndefined();
    // A fixed xorshift sequence: the same mutations on every run.
    let state = 0x2545f491;
    const next = () => ((state ^= state << 13), (state ^= state >>> 17), (state ^= state << 5), state >>> 0);
    const sigStart = original.lastIndexOf(Buffer.from([0xfa, 0xde, 0x0c, 0xc0]));
    let failures = 0;
    for (let k = 0; k < 1500; k++) {
      const bytes = Buffer.from(original);
      // Half the mutations hit the last slice's signature, the rest anywhere (headers, load commands, code).
      const base = k % 2 ? sigStart : 0;
      for (let n = 1 + (next() % 4); n > 0; n--) bytes[base + (next() % (bytes.length - base))] = next() & 0xff;
      try {
        await readAll(bytes);
      } catch (err) {
        if (!(err instanceof MachoError) && !(err instanceof LimitExceededError)) throw err;
        failures++;
      }
    }
    // The mutations must reach the parsers' checks, not only the code pages.
    expect(failures).toBeGreaterThan(20);
  });
});
