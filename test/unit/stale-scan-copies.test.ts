// Protects: the package copies a process left behind when it died during a scan are removed when the next one
// starts, and only those: a copy still being written or analysed (recent by its files' times) stays, as does
// anything else in the temporary directory.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeStaleCopies } from '../../src/jobs/artifact-file';

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'stale-copies-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const HOUR = 3600_000;
function copy(name: string, ageMs: { dir: number; file: number }): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  const file = path.join(dir, 'bld_x.apk');
  writeFileSync(file, 'PK');
  const at = (age: number) => new Date(Date.now() - age);
  utimesSync(file, at(ageMs.file), at(ageMs.file));
  utimesSync(dir, at(ageMs.dir), at(ageMs.dir));
  return dir;
}

it('removes copies last written before the cut-off, keeps those written since and anything not a scan copy', async () => {
  const stale = copy('shieldgate-scan-aaaa', { dir: 2 * HOUR, file: 2 * HOUR });
  const beingWritten = copy('shieldgate-scan-bbbb', { dir: 2 * HOUR, file: 1_000 }); // a long copy: its file is recent
  const fresh = copy('shieldgate-scan-cccc', { dir: 1_000, file: 1_000 });
  const other = copy('someone-else', { dir: 2 * HOUR, file: 2 * HOUR });
  expect(await removeStaleCopies(HOUR, Date.now(), tmp)).toBe(1);
  expect([stale, beingWritten, fresh, other].map(existsSync)).toEqual([false, true, true, true]);
});
