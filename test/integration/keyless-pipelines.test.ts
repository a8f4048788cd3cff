// Protects: docs/keyless-ci.md's pipeline for each CI beyond GitHub (.gitlab-ci.yml, .buildkite/pipeline.yml,
// .circleci/config.yml, bitbucket-pipelines.yml) runs as written, as its CI would run it: the job's variables as the
// provider sets them (GitLab's `id_tokens:` variable, Bitbucket's BITBUCKET_STEP_OIDC_TOKEN, each CI's commit, branch
// and run link), `buildkite-agent` and `circleci` on PATH answering as the real tools do (the token on stdout for the
// exact `oidc request-token --audience <aud>` / `run oidc get --claims {"aud": ...}` call, their error otherwise), and
// the tokens made by a loopback issuer of the provider's (test/fixtures/oidc), exchanged through a rule of that
// provider. The client installs from the release tarball, registers the build, uploads and gates on its scan; the
// build records the provider's provenance. A job not set up for OIDC fails with one line naming what to add.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startHarness, json, readJson, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer, type PathIssuer } from '../support/oidc-issuer';
import { BUILDKITE_AGENT_REFUSAL, CIRCLECI_REFUSAL } from '../support/ci-tool-answers';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { packRelease, type Release } from '../../client/scripts/pack-release';
import { gitlabClaims, GITLAB_HEADER } from '../fixtures/oidc/gitlab';
import { buildkiteClaims, BUILDKITE_HEADER } from '../fixtures/oidc/buildkite';
import { circleciClaims, CIRCLECI_HEADER, CIRCLECI_ORG_ID, CIRCLECI_PROJECT_ID } from '../fixtures/oidc/circleci';
import { bitbucketClaims, bitbucketWorkspaceAudience, BITBUCKET_HEADER, BITBUCKET_REPOSITORY_UUID, BITBUCKET_WORKSPACE_UUID } from '../fixtures/oidc/bitbucket';

const ROOT = path.join(__dirname, '..', '..');
type Provider = 'gitlab' | 'buildkite' | 'circleci' | 'bitbucket';
/** Each pipeline's file, as its first line names it. */
const FILES: Record<Provider, string> = { gitlab: '.gitlab-ci.yml', buildkite: '.buildkite/pipeline.yml', circleci: '.circleci/config.yml', bitbucket: 'bitbucket-pipelines.yml' };
const SHA = 'c0ffee1234567890c0ffee1234567890c0ffee12';

let h: Harness;
let root: OidcIssuer;
const issuers = {} as Record<Provider, PathIssuer>;
let release: Release;
let apk: string;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keyless-pipelines-'));
  release = packRelease(path.join(tmp, 'release'));
  root = await startOidcIssuer();
  issuers.gitlab = root.at('/gitlab', '/oauth/discovery/keys');
  issuers.buildkite = root.at('/buildkite', '/.well-known/jwks');
  issuers.circleci = root.at(`/circleci/org/${CIRCLECI_ORG_ID}`, '/.well-known/jwks-pub.json');
  issuers.bitbucket = root.at('/bitbucket/2.0/workspaces/acme/pipelines-config/identity/oidc', '/keys.json');
  h = await startHarness({
    env: { OIDC_ISSUER: root.url, OIDC_ALLOW_INSECURE_ISSUER: 'on', OIDC_ALLOWED_ISSUERS: Object.values(issuers).map((i) => i.url).join(',') },
  });
  apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36, application: { 'android:allowBackup': 'true' } }), sign: 'release' });
}, 180_000);

afterAll(async () => {
  await h?.close();
  await root?.close();
  await cleanupFixtures();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface Block {
  line: number;
  text: string;
}

/** The fenced yaml blocks of docs/keyless-ci.md whose first line names a pipeline file. */
function pipelines(): Map<string, Block> {
  const lines = fs.readFileSync(path.join(ROOT, 'docs', 'keyless-ci.md'), 'utf8').split('\n');
  const found = new Map<string, Block>();
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```yaml') continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j] !== '```'; j++) body.push(lines[j]);
    const file = /^# (\S+)$/.exec(body[0] ?? '')?.[1];
    if (file && Object.values(FILES).includes(file)) found.set(file, { line: i + 1, text: body.join('\n') });
    i = j;
  }
  return found;
}

/** The placeholders of the document, made real. */
const concrete = (text: string, appId: string) => text.replaceAll('https://api.example.com', h.baseUrl).replaceAll('app_3fK9xQ2mZ', appId);

/** What each CI runs: the script lines, the variables the pipeline sets, and the audience it asks the token for. */
interface Job {
  scripts: string[];
  variables: Record<string, string>;
  audiences: string[];
}

function jobOf(provider: Provider, doc: any): Job { // eslint-disable-line @typescript-eslint/no-explicit-any
  switch (provider) {
    case 'gitlab': {
      const job = doc.upload;
      return { scripts: job.script, variables: job.variables ?? {}, audiences: [job.id_tokens.SHIELDGATE_ID_TOKEN.aud] };
    }
    case 'buildkite': {
      const step = doc.steps[0];
      return { scripts: step.commands, variables: step.env ?? {}, audiences: [] };
    }
    case 'circleci': {
      const job = doc.jobs.upload;
      return { scripts: job.steps.filter((s: unknown) => typeof s === 'object' && s !== null && 'run' in s).map((s: { run: string }) => s.run), variables: job.environment ?? {}, audiences: [] };
    }
    case 'bitbucket': {
      const step = doc.pipelines.branches.main[0].step;
      return { scripts: step.script, variables: {}, audiences: step.oidc?.audiences ?? [] };
    }
  }
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, encoding: 'utf8', timeout: 180_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

const base = (provider: Provider, audience: unknown) => ({ issuer: issuers[provider].url, audience: audience as string, now: h.clock.now() });

/**
 * A fake CI tool on PATH answering as the real one: the next of `tokens` on stdout for exactly the expected
 * arguments, the real tool's error and exit code 1 otherwise. Each call is recorded.
 */
function fakeTool(bin: string, name: string, expected: string[], tokens: string[], failure: string): string {
  const dir = path.join(bin, `${name}-state`);
  fs.mkdirSync(dir, { recursive: true });
  tokens.forEach((token, i) => fs.writeFileSync(path.join(dir, `token-${i}`), token));
  const script = `#!/usr/bin/env node
const fs = require('fs'), path = require('path');
const dir = ${JSON.stringify(dir)};
fs.appendFileSync(path.join(dir, 'calls'), JSON.stringify(process.argv.slice(2)) + '\\n');
if (JSON.stringify(process.argv.slice(2)) !== ${JSON.stringify(JSON.stringify(expected))}) { process.stderr.write(${JSON.stringify(failure + '\n')}); process.exit(1); }
const next = fs.readdirSync(dir).filter((f) => f.startsWith('token-')).sort()[0];
if (!next) { process.stderr.write(${JSON.stringify(failure + '\n')}); process.exit(1); }
process.stdout.write(fs.readFileSync(path.join(dir, next), 'utf8') + '\\n');
fs.rmSync(path.join(dir, next));
`;
  fs.writeFileSync(path.join(bin, name), script, { mode: 0o755 });
  return path.join(dir, 'calls');
}

/** The job's environment as the provider's runner gives it, with the job's token or the tools that mint it. */
function ciEnvironment(provider: Provider, job: Job, work: string, withOidc: boolean): { env: Record<string, string>; calls: string | null } {
  const bin = fs.mkdtempSync(path.join(tmp, 'bin-'));
  const cache = fs.mkdtempSync(path.join(tmp, 'npm-cache-'));
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: work, CI: 'true', SHIELDGATE_CI_SHA256: release.sha256,
    npm_config_cache: cache, npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false',
    ...job.variables,
  };
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown>) => issuers[provider].sign(claims, header);
  let calls: string | null = null;
  switch (provider) {
    case 'gitlab':
      Object.assign(env, { GITLAB_CI: 'true', CI_COMMIT_SHA: SHA, CI_COMMIT_REF_NAME: 'main', CI_COMMIT_BRANCH: 'main', CI_PIPELINE_SOURCE: 'push', CI_JOB_URL: 'https://gitlab.com/acme/mobile-app/-/jobs/42' });
      // GitLab puts the token in the id_tokens variable, for the audience the pipeline wrote.
      if (withOidc) env.SHIELDGATE_ID_TOKEN = sign(gitlabClaims(base(provider, job.audiences[0]), { sha: SHA }), GITLAB_HEADER);
      break;
    case 'buildkite': {
      Object.assign(env, { BUILDKITE: 'true', BUILDKITE_COMMIT: SHA, BUILDKITE_BRANCH: 'main', BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/mobile-app/builds/42' });
      // With --claim organization_id, the token carries the organisation's id (Buildkite Docs, optional claims).
      const tokens = withOidc ? Array.from({ length: 4 }, () => sign(buildkiteClaims(base(provider, h.baseUrl), { build_commit: SHA, organization_id: '0190a9c6-3d0e-7a1b-9c2d-4e5f60718293' }), BUILDKITE_HEADER)) : [];
      calls = fakeTool(bin, 'buildkite-agent', ['oidc', 'request-token', '--audience', h.baseUrl, '--claim', 'organization_id'], tokens, BUILDKITE_AGENT_REFUSAL.join('\n'));
      break;
    }
    case 'circleci': {
      Object.assign(env, { CIRCLECI: 'true', CIRCLE_SHA1: SHA, CIRCLE_BRANCH: 'main', CIRCLE_BUILD_URL: 'https://app.circleci.com/pipelines/github/acme/mobile-app/42' });
      const tokens = withOidc ? Array.from({ length: 4 }, () => sign(circleciClaims(base(provider, h.baseUrl)), CIRCLECI_HEADER)) : [];
      calls = fakeTool(bin, 'circleci', ['run', 'oidc', 'get', '--claims', JSON.stringify({ aud: h.baseUrl })], tokens, CIRCLECI_REFUSAL.join('\n'));
      break;
    }
    case 'bitbucket':
      Object.assign(env, { BITBUCKET_BUILD_NUMBER: '42', BITBUCKET_COMMIT: SHA, BITBUCKET_BRANCH: 'main', BITBUCKET_GIT_HTTP_ORIGIN: 'http://bitbucket.org/acme/mobile-app' });
      // Bitbucket's token for a step listing audiences: the workspace's own, then the step's.
      if (withOidc) env.BITBUCKET_STEP_OIDC_TOKEN = sign(bitbucketClaims(base(provider, h.baseUrl), { aud: [bitbucketWorkspaceAudience(BITBUCKET_WORKSPACE_UUID), ...job.audiences] }), BITBUCKET_HEADER);
      break;
  }
  return { env, calls };
}

const RULES: Record<Provider, () => Record<string, unknown>> = {
  gitlab: () => ({ provider: 'gitlab', issuer: issuers.gitlab.url, subjectPattern: 'project_path:acme/mobile-app:ref_type:branch:ref:main', scopes: ['builds:write', 'builds:read', 'scans:read'] }),
  buildkite: () => ({ provider: 'buildkite', issuer: issuers.buildkite.url, organizationSlug: 'acme', pipelineSlug: 'mobile-app', branch: 'main', scopes: ['builds:write', 'builds:read', 'scans:read'] }),
  circleci: () => ({ provider: 'circleci', issuer: issuers.circleci.url, projectId: CIRCLECI_PROJECT_ID, branch: 'main', scopes: ['builds:write', 'builds:read', 'scans:read'] }),
  bitbucket: () => ({ provider: 'bitbucket', issuer: issuers.bitbucket.url, workspaceUuid: BITBUCKET_WORKSPACE_UUID, repositoryUuid: BITBUCKET_REPOSITORY_UUID, branch: 'main', scopes: ['builds:write', 'builds:read', 'scans:read'] }),
};

async function workspace(): Promise<{ appId: string; adminKey: string; work: string }> {
  const { appId } = await h.newApp();
  const { key: adminKey } = await h.newKey(appId, ['rules:write', 'rules:read']);
  const work = fs.mkdtempSync(path.join(tmp, 'work-'));
  for (const f of [release.tarball, `${release.tarball}.sha256`]) fs.copyFileSync(f, path.join(work, path.basename(f)));
  fs.copyFileSync(apk, path.join(work, 'app-release.apk')); // what the pipeline's build job left
  return { appId, adminKey, work };
}

/**
 * GitLab, Buildkite and Bitbucket run a step's lines in one shell (an `export` holds for the lines after it), each
 * stopping at the first failure; CircleCI runs each `run` step in a shell of its own.
 */
async function runJob(provider: Provider, job: Job, work: string, env: Record<string, string>, appId: string, at: string): Promise<{ code: number; out: string }> {
  const shells = provider === 'circleci' ? job.scripts : [job.scripts.join('\n')];
  let last = { code: 0, out: '' };
  for (const script of shells) {
    last = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', concrete(script, appId)], work, env);
    if (last.code !== 0) return { code: last.code, out: `${at}: ${script}\n${last.out}` };
  }
  return last;
}

it('finds one pipeline per provider in docs/keyless-ci.md', () => {
  expect([...pipelines().keys()].sort()).toEqual(Object.values(FILES).sort());
});

describe.each(Object.keys(FILES) as Provider[])('%s', (provider) => {
  it('runs the documented pipeline as written: keyless upload, scan and gate, with the provider\'s provenance', async () => {
    const block = pipelines().get(FILES[provider])!;
    const { appId, adminKey, work } = await workspace();
    expect((await h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(adminKey), body: JSON.stringify(RULES[provider]()) })).status).toBe(201);
    const job = jobOf(provider, YAML.parse(concrete(block.text, appId)));
    const { env, calls } = ciEnvironment(provider, job, work, true);
    const r = await runJob(provider, job, work, env, appId, `docs/keyless-ci.md:${block.line}`);
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: expect.stringContaining('grade') });
    // The tool was asked exactly as the real one is asked, at least once.
    if (calls) expect(fs.readFileSync(calls, 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(1);
    const [build] = await h.deps.repos.builds.listForApp(appId, 10);
    expect(build.provenance).toMatchObject({ provider, ref: 'refs/heads/main' });
    expect(build.commit).toBe(SHA);
    const reader = await h.newKey(appId, ['builds:read']);
    const shown = await readJson(await h.api(`/v1/builds/${build._id}`, { headers: json(reader.key) }));
    expect(shown.artifact.status).toBe('uploaded');
    // No token reaches the job's log.
    expect(r.out).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./);
  });

  it('fails with one line naming what to add when the job was not set up for OIDC', async () => {
    const block = pipelines().get(FILES[provider])!;
    const { appId, work } = await workspace();
    const job = jobOf(provider, YAML.parse(concrete(block.text, appId)));
    const { env } = ciEnvironment(provider, job, work, false);
    const r = await runJob(provider, job, work, env, appId, `docs/keyless-ci.md:${block.line}`);
    expect(r.code).not.toBe(0);
    const said = r.out.split('\n').filter((line) => line.includes('no OIDC token'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('docs/keyless-ci.md');
    const hint = { gitlab: 'id_tokens', buildkite: 'buildkite-agent oidc request-token', circleci: 'circleci', bitbucket: 'audiences' }[provider];
    expect(said[0]).toContain(hint);
  });
});
