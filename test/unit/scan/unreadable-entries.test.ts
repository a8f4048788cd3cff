// Protects: an entry the platform cannot read (compressed with bzip2, which apksigner still verifies and the package
// manager installs) is skipped by the readers of what a package holds (DEX, native libraries, assets), never made
// the reason the whole package is unreadable. Made with Info-ZIP's `zip -Z bzip2`; `unzip -v` says which method each
// entry uses.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { nativeCorpus } from '../../fixtures/native-corpus';
import { ids, manifest, scan } from './helpers';
import { run } from '../../support/host-tools';

afterAll(cleanupFixtures);

it('skips a bzip2 DEX file, native library and asset, and analyses the rest of the package', async () => {
  const apk = await buildApk({ manifest: manifest(), sign: 'none' });
  const dir = path.join(path.dirname(apk), 'bzip2');
  await mkdir(path.join(dir, 'lib', 'arm64-v8a'), { recursive: true });
  await mkdir(path.join(dir, 'assets'), { recursive: true });
  const lib = (await nativeCorpus()).libraries.find((l) => l.name === 'arm64-v8a/hardened')!;
  await copyFile(lib.file, path.join(dir, 'lib', 'arm64-v8a', 'libx.so'));
  // Large and repetitive enough that zip compresses them (it stores what would not shrink).
  await writeFile(path.join(dir, 'classes.dex'), Buffer.concat([Buffer.from('dex\n035\0'), Buffer.alloc(4096)]));
  await writeFile(path.join(dir, 'assets', 'config.json'), `{"token":"ghp_0123456789abcdefghijABCDEFGHIJ012345",${'"padding":"aaaaaaaaaaaaaaaa",'.repeat(100)}"end":1}`);
  await run('zip', ['-q', '-Z', 'bzip2', apk, 'classes.dex', 'lib/arm64-v8a/libx.so', 'assets/config.json'], { cwd: dir });
  const { stdout } = await run('unzip', ['-v', apk]);
  for (const entry of ['classes.dex', 'lib/arm64-v8a/libx.so', 'assets/config.json']) expect(stdout).toMatch(new RegExp(`BZip2\\s.*${entry.replace(/\./g, '\\.')}`));

  const result = await scan(apk);
  expect(ids(result)).not.toContain('package.unreadable');
  expect(ids(result)).toContain('android.unsigned');
  expect(result.inventory?.nativeLibraries).toEqual([]);
  expect(ids(result)).not.toContain('package.secret-github');
});
