// The commit shieldgate-ci declares: --commit, else the CI's own variable, else HEAD of the git repository that
// holds the package (asked of git itself in repositories made by `git init`), never the checkout the client or the
// job runs from, else none.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CI_COMMIT_VARIABLES, detectCommit } from '../../client/src/commit';
import { runSync } from '../support/host-tools';

const SHA = 'a3f1c2e7d9b04c5e8f6a7b2c1d0e9f8a7b6c5d4e';
const OTHER = '0123456789abcdef0123456789abcdef01234567';
let tmp: string;

/** git without the developer's or the runner's configuration and GIT_* variables. */
function git(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: tmp, GIT_CONFIG_NOSYSTEM: '1' };
  return runSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, env }).toString().trim();
}

/** A repository with one commit and a package under app/build/outputs (ignored, as build outputs are). */
function repoWithPackage(name: string, objectFormat = 'sha1'): { root: string; file: string; head: string } {
  const root = path.join(tmp, name);
  fs.mkdirSync(path.join(root, 'app', 'build', 'outputs'), { recursive: true });
  git(root, 'init', '-q', `--object-format=${objectFormat}`);
  fs.writeFileSync(path.join(root, '.gitignore'), 'build/\n');
  git(root, 'add', '.gitignore');
  git(root, 'commit', '-q', '-m', 'first');
  const file = path.join(root, 'app', 'build', 'outputs', 'app-release.apk');
  fs.writeFileSync(file, 'PK');
  return { root, file, head: git(root, 'rev-parse', 'HEAD') };
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sgci-commit-')));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

it('takes --commit first, whatever the CI and the repository say', () => {
  const { file } = repoWithPackage('explicit');
  expect(detectCommit('deadbeef', { GITHUB_SHA: SHA }, file)).toEqual({ commit: 'deadbeef', source: '--commit' });
});

it.each(CI_COMMIT_VARIABLES.map((name) => [name]))('takes %s when it is the CI that set one', (name) => {
  const { file } = repoWithPackage(`ci-${name}`);
  expect(detectCommit(undefined, { [name]: SHA }, file)).toEqual({ commit: SHA, source: name });
});

it('knows each variable of GitHub Actions, GitLab CI, Bitrise, CircleCI and Azure Pipelines', () => {
  expect([...CI_COMMIT_VARIABLES].sort()).toEqual(['BITRISE_GIT_COMMIT', 'BUILD_SOURCEVERSION', 'CIRCLE_SHA1', 'CI_COMMIT_SHA', 'GITHUB_SHA']);
  expect(detectCommit(undefined, { GITHUB_SHA: SHA, CI_COMMIT_SHA: OTHER }).commit).toBe(SHA);
});

it('skips a variable that holds no commit (an Azure TFVC changeset number) for the next source', () => {
  const { file, head } = repoWithPackage('tfvc');
  expect(detectCommit(undefined, { BUILD_SOURCEVERSION: '4711' }, file)).toEqual({ commit: head, source: 'git' });
  expect(detectCommit(undefined, { BUILD_SOURCEVERSION: '4711' })).toEqual({ commit: null, source: 'none' });
});

it("outside CI, takes HEAD of the package's own repository, not that of the working directory", () => {
  // The tests run from this project's checkout: a repository whose HEAD must not be taken for the app's.
  const ownHead = git(process.cwd(), 'rev-parse', 'HEAD');
  const { file, head } = repoWithPackage('app');
  expect(head).not.toBe(ownHead);
  expect(detectCommit(undefined, {}, file)).toEqual({ commit: head, source: 'git' });
  expect(detectCommit(undefined, {}, path.relative(process.cwd(), file))).toEqual({ commit: head, source: 'git' });
});

it('ignores GIT_DIR and GIT_WORK_TREE that point at another repository', () => {
  const { file, head } = repoWithPackage('pointed');
  const saved = { GIT_DIR: process.env.GIT_DIR, GIT_WORK_TREE: process.env.GIT_WORK_TREE };
  process.env.GIT_DIR = path.join(process.cwd(), '.git');
  process.env.GIT_WORK_TREE = process.cwd();
  try {
    expect(detectCommit(undefined, {}, file).commit).toBe(head);
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

it('takes a SHA-256 repository’s 64-digit object name', () => {
  const { file, head } = repoWithPackage('sha256', 'sha256');
  expect(head).toMatch(/^[0-9a-f]{64}$/);
  expect(detectCommit(undefined, {}, file)).toEqual({ commit: head, source: 'git' });
});

it('is none for a package in no repository, even when the working directory is one', () => {
  const loose = path.join(tmp, 'loose');
  fs.mkdirSync(loose);
  const file = path.join(loose, 'app-release.apk');
  fs.writeFileSync(file, 'PK');
  expect(() => git(loose, 'rev-parse', '--git-dir')).toThrow();
  expect(detectCommit(undefined, {}, file)).toEqual({ commit: null, source: 'none' });
});

it('is none for a repository without a commit yet', () => {
  const root = path.join(tmp, 'empty');
  fs.mkdirSync(root);
  git(root, 'init', '-q');
  fs.writeFileSync(path.join(root, 'app.apk'), 'PK');
  expect(detectCommit(undefined, {}, path.join(root, 'app.apk'))).toEqual({ commit: null, source: 'none' });
});
