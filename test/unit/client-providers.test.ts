// shieldgate-ci in each CI it knows: the CI detected from its environment, the commit, ref and run link read from its
// variables, the job's OIDC token got the CI's own way (GitLab's id_tokens: variable, buildkite-agent, the circleci
// CLI, Bitbucket's step token) for the server's address as audience, one clear line for a job not set up for OIDC,
// renewals (a fresh token where the CI mints one, a clear failure where the job has one token), and no workflow
// command outside GitHub Actions. buildkite-agent and circleci are fakes on PATH that answer as the real tools do and
// record how they were called.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { ApiClient } from '../../client/src/api';
import { main } from '../../client/src/cli';
import { detectCommit } from '../../client/src/commit';
import { ciOidcCredential, resolveCredential } from '../../client/src/credentials';
import { CliError } from '../../client/src/errors';
import { bitbucket, buildkite, circleci, detectProvider, github, gitlab, type CiProvider } from '../../client/src/providers/detect';
import { stderrLine } from '../../client/src/providers/command';
import { BUILDKITE_AGENT_REFUSAL, CIRCLECI_REFUSAL } from '../support/ci-tool-answers';

const AUD = 'https://api.example.com';
const SHA = 'a3f1c2e7d9b04c5e8f6a7b2c1d0e9f8a7b6c5d4e';
const OTHER = '0123456789abcdef0123456789abcdef01234567';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jws = (payload: Record<string, unknown>) => `${b64({ alg: 'RS256', kid: 'k1' })}.${b64({ sub: 'project_path:acme/app:ref_type:branch:ref:main', jti: 'j1', ...payload })}.c2lnbmF0dXJl`;
const options = { idTokenVar: 'SHIELDGATE_ID_TOKEN' };

let tmp: string;
let bin: string;

/** A fake CI tool: records its arguments (one call a line, tab-separated), then answers as FAKE_MODE says. */
function fakeTool(name: string, failure: string[]): void {
  const script = `#!/bin/sh
printf '%s\\t' "$@" >> "$FAKE_LOG"; printf '\\n' >> "$FAKE_LOG"
n=$(( $(cat "$FAKE_LOG.count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FAKE_LOG.count"
case "$FAKE_MODE" in
  ok) printf '  %s%s\\n\\n' "$FAKE_TOKEN" "$n" ;;
  unavailable) ${failure.map((line) => `printf '%s\\n' ${JSON.stringify(line)} >&2`).join('; ')}; exit 1 ;;
  leaky) printf 'error: token %s was refused\\n' "$FAKE_TOKEN" >&2; exit 2 ;;
  silent) exit 3 ;;
  garbage) echo 'Usage: oidc [command]' ;;
  chatty) head -c 70000 /dev/zero | tr '\\0' a ;;
  hang) exec sleep 5 ;;
esac
`;
  fs.writeFileSync(path.join(bin, name), script, { mode: 0o755 });
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sgci-providers-')));
  bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  // What each tool prints when the job may not have a token (test/support/ci-tool-answers.ts).
  fakeTool('buildkite-agent', BUILDKITE_AGENT_REFUSAL);
  fakeTool('circleci', CIRCLECI_REFUSAL);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let calls = 0;
/** The environment of a job with the fakes first on PATH; each test its own log. */
function toolEnv(ci: Record<string, string>, mode: string): Record<string, string> {
  return { ...ci, PATH: `${bin}${path.delimiter}${process.env.PATH}`, FAKE_MODE: mode, FAKE_LOG: path.join(tmp, `calls-${++calls}`), FAKE_TOKEN: jws({ aud: AUD }) };
}
const callsOf = (env: Record<string, string>) =>
  fs.existsSync(env.FAKE_LOG) ? fs.readFileSync(env.FAKE_LOG, 'utf8').split('\n').filter(Boolean).map((line) => line.split('\t').slice(0, -1)) : [];

/** The service's exchange: answers 200 with a 10-minute access token per exchange, or the status given. */
function fakeApi(status = 200) {
  const sent: string[] = [];
  const api = {
    POST: async (_route: string, init: { body: { token: string; appId: string } }) => {
      sent.push(init.body.token);
      if (status === 200) {
        const data = { accessToken: `acc_${sent.length}`, tokenType: 'Bearer', expiresIn: 600, scopes: ['builds:write'], appId: init.body.appId };
        return { data, response: new Response(null, { status }) };
      }
      return { error: { code: 'unauthorized', detail: 'refused' }, response: new Response(null, { status }) };
    },
  } as unknown as ApiClient;
  return { api, sent };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return (error as Error).message;
  }
  throw new Error('expected a CliError');
}

const ENVS: Record<string, Record<string, string>> = {
  'GitHub Actions': { GITHUB_ACTIONS: 'true', GITHUB_SHA: SHA, GITHUB_REF: 'refs/heads/main', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/app', GITHUB_RUN_ID: '42' },
  'GitLab CI': { GITLAB_CI: 'true', CI_COMMIT_SHA: SHA, CI_COMMIT_REF_NAME: 'main', CI_JOB_URL: 'https://gitlab.com/acme/app/-/jobs/42', CI_PIPELINE_URL: 'https://gitlab.com/acme/app/-/pipelines/7' },
  Buildkite: { BUILDKITE: 'true', BUILDKITE_COMMIT: SHA, BUILDKITE_BRANCH: 'main', BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/app/builds/42' },
  CircleCI: { CIRCLECI: 'true', CI: 'true', CIRCLE_SHA1: SHA, CIRCLE_BRANCH: 'main', CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/app/42' },
  'Bitbucket Pipelines': { CI: 'true', BITBUCKET_BUILD_NUMBER: '42', BITBUCKET_COMMIT: SHA, BITBUCKET_BRANCH: 'main', BITBUCKET_GIT_HTTP_ORIGIN: 'http://bitbucket.org/acme/app' },
};
const RUN_URLS: Record<string, string> = {
  'GitHub Actions': 'https://github.com/acme/app/actions/runs/42',
  'GitLab CI': 'https://gitlab.com/acme/app/-/jobs/42',
  Buildkite: 'https://buildkite.com/acme/app/builds/42',
  CircleCI: 'https://circleci.com/gh/acme/app/42',
  'Bitbucket Pipelines': 'https://bitbucket.org/acme/app/pipelines/results/42',
};

describe('the CI of the job', () => {
  it.each(Object.keys(ENVS))('is %s from its own variables, with its commit, full ref and run link', (name) => {
    const env = ENVS[name];
    const provider = detectProvider(env)!;
    expect(provider.name).toBe(name);
    expect(provider.commit(env)).toBe(SHA);
    expect(provider.ref(env)).toBe('refs/heads/main');
    expect(provider.runUrl(env)).toBe(RUN_URLS[name]);
    expect(detectCommit(undefined, env)).toEqual({ commit: SHA, source: provider.commitVariable });
  });

  it('is none outside CI, or in a CI it does not know (whose commit variable is still read)', () => {
    expect(detectProvider({})).toBeUndefined();
    expect(detectProvider({ CI: 'true', GITLAB_CI: 'false', BUILDKITE: 'false', CIRCLECI: '' })).toBeUndefined();
    expect(detectProvider({ BITRISE_IO: 'true', BITRISE_GIT_COMMIT: SHA })).toBeUndefined();
    expect(detectCommit(undefined, { BITRISE_GIT_COMMIT: SHA })).toEqual({ commit: SHA, source: 'BITRISE_GIT_COMMIT' });
    expect(detectCommit(undefined, { BUILDKITE_COMMIT: SHA })).toEqual({ commit: null, source: 'none' }); // not in Buildkite
  });

  it('is GitHub Actions for a step given the token endpoint without GITHUB_ACTIONS, as before', () => {
    expect(detectProvider({ ACTIONS_ID_TOKEN_REQUEST_URL: 'http://x/?a=1', ACTIONS_ID_TOKEN_REQUEST_TOKEN: 't' })).toBe(github);
  });

  it("reads the detected CI's commit before any other CI's variable, and skips one that is no commit", () => {
    expect(detectCommit(undefined, { GITLAB_CI: 'true', CI_COMMIT_SHA: SHA, GITHUB_SHA: OTHER })).toEqual({ commit: SHA, source: 'CI_COMMIT_SHA' });
    expect(detectCommit(undefined, { BUILDKITE: 'true', BUILDKITE_COMMIT: 'HEAD', CIRCLE_SHA1: OTHER })).toEqual({ commit: OTHER, source: 'CIRCLE_SHA1' });
    expect(detectCommit(undefined, { BUILDKITE: 'true', BUILDKITE_COMMIT: 'HEAD' })).toEqual({ commit: null, source: 'none' });
    expect(detectCommit('deadbeef', ENVS.Buildkite)).toEqual({ commit: 'deadbeef', source: '--commit' });
  });

  it('takes a tag as refs/tags/, before the branch variable some CIs also set on tags', () => {
    expect(gitlab.ref({ CI_COMMIT_REF_NAME: 'v1.2.0', CI_COMMIT_TAG: 'v1.2.0' })).toBe('refs/tags/v1.2.0');
    expect(buildkite.ref({ BUILDKITE_BRANCH: 'v1.2.0', BUILDKITE_TAG: 'v1.2.0' })).toBe('refs/tags/v1.2.0');
    expect(circleci.ref({ CIRCLE_TAG: 'v1.2.0' })).toBe('refs/tags/v1.2.0');
    expect(bitbucket.ref({ BITBUCKET_TAG: 'v1.2.0' })).toBe('refs/tags/v1.2.0');
    expect(gitlab.ref({})).toBeUndefined();
  });

  it('links the run as each CI gives it, or not at all', () => {
    expect(gitlab.runUrl({ CI_PIPELINE_URL: 'https://gitlab.example.com/g/p/-/pipelines/7' })).toBe('https://gitlab.example.com/g/p/-/pipelines/7');
    expect(gitlab.runUrl({ CI_JOB_URL: 'javascript:alert(1)' })).toBeUndefined();
    expect(bitbucket.runUrl({ BITBUCKET_BUILD_NUMBER: '42', BITBUCKET_GIT_HTTP_ORIGIN: 'https://bitbucket.org/acme/app.git/' })).toBe('https://bitbucket.org/acme/app/pipelines/results/42');
    expect(bitbucket.runUrl({ BITBUCKET_BUILD_NUMBER: '42' })).toBeUndefined();
    expect(github.runUrl({ GITHUB_REPOSITORY: 'acme/app', GITHUB_RUN_ID: 'x' })).toBeUndefined();
  });
});

describe("GitLab's id_tokens: variable", () => {
  const env = (token?: string, name = 'SHIELDGATE_ID_TOKEN') => ({ ...ENVS['GitLab CI'], ...(token === undefined ? {} : { [name]: token }) });

  it('is the token, for the audience the job named', async () => {
    const token = jws({ aud: AUD });
    expect(await gitlab.idToken(env(`${token}\n`), AUD, options)).toBe(token);
    expect(await gitlab.idToken(env(token, 'RELEASE_TOKEN'), AUD, { idTokenVar: 'RELEASE_TOKEN' })).toBe(token);
  });

  it('names the snippet to add when the job has no such variable', async () => {
    expect(await failure(gitlab.idToken(env(), AUD, options))).toBe(`no OIDC token: add "id_tokens: SHIELDGATE_ID_TOKEN: aud: ${AUD}" to the job (docs/keyless-ci.md, GitLab)`);
    expect(await failure(gitlab.idToken(env(jws({ aud: AUD })), AUD, { idTokenVar: 'RELEASE_TOKEN' }))).toBe(
      `no OIDC token: add "id_tokens: RELEASE_TOKEN: aud: ${AUD}" to the job (docs/keyless-ci.md, GitLab)`,
    );
  });

  it('is never sent when it is no token, or a token for another audience (or a list, which the service refuses)', async () => {
    expect(await failure(gitlab.idToken(env('$SHIELDGATE_ID_TOKEN'), AUD, options))).toMatch(/^SHIELDGATE_ID_TOKEN holds no OIDC token \(not a compact JWS\): add "id_tokens: /);
    const other = await failure(gitlab.idToken(env(jws({ aud: 'https://vault.example.com' })), AUD, options));
    expect(other).toBe(`the OIDC token in SHIELDGATE_ID_TOKEN has audience "https://vault.example.com", not "${AUD}": add "id_tokens: SHIELDGATE_ID_TOKEN: aud: ${AUD}" to the job (docs/keyless-ci.md, GitLab)`);
    expect(await failure(gitlab.idToken(env(jws({ aud: [AUD, 'x'] })), AUD, options))).toMatch(/has audience \["https:\/\/api\.example\.com","x"\], not/);
  });
});

describe("Bitbucket's step token", () => {
  const env = (token?: string) => ({ ...ENVS['Bitbucket Pipelines'], ...(token ? { BITBUCKET_STEP_OIDC_TOKEN: token } : {}) });
  const setup = `add "oidc: { audiences: [${AUD}] }" to the step ("oidc: true" alone gives a token for the workspace's audience; docs/keyless-ci.md, Bitbucket Pipelines)`;

  it('is the token when it carries our audience, alone or beside the workspace\'s', async () => {
    const both = jws({ aud: [AUD, 'ari:cloud:bitbucket::workspace/1234'] });
    expect(await bitbucket.idToken(env(both), AUD, options)).toBe(both);
  });

  it('is missing in a step without OIDC, and refused for the workspace audience alone', async () => {
    expect(await failure(bitbucket.idToken(env(), AUD, options))).toBe(`no OIDC token: ${setup}`);
    expect(await failure(bitbucket.idToken(env(jws({ aud: 'ari:cloud:bitbucket::workspace/1234' })), AUD, options))).toBe(
      `the OIDC token in BITBUCKET_STEP_OIDC_TOKEN has audience "ari:cloud:bitbucket::workspace/1234", not "${AUD}": ${setup}`,
    );
  });
});

it.each(['GitHub Actions', 'GitLab CI', 'Buildkite', 'CircleCI', 'Bitbucket Pipelines'])('%s has a one-line setup hint naming its docs', (name) => {
  const hint = detectProvider(ENVS[name])!.missingSetupHint(AUD, options);
  expect(hint).toMatch(new RegExp(`^no OIDC token: [^\\n]+\\(.*docs/keyless-ci\\.md, ${name.split(' ')[0]}[^)]*\\)$`));
});

describe('GitHub Actions without the permission', () => {
  it('names the permission to add', async () => {
    expect(await failure(github.idToken({ GITHUB_ACTIONS: 'true' }, AUD, options))).toBe('no OIDC token: add "permissions: id-token: write" to the job (docs/keyless-ci.md, GitHub Actions)');
  });
});

describe.each([
  {
    provider: buildkite,
    ci: ENVS.Buildkite,
    tool: 'buildkite-agent',
    args: ['oidc', 'request-token', '--audience', AUD, '--claim', 'organization_id'],
    shown: `buildkite-agent oidc request-token --audience ${AUD} --claim organization_id`,
    docs: 'docs/keyless-ci.md, Buildkite',
    firstLine: '2026-05-04 10:00:00 ERROR  Could not obtain OIDC token for audience https://api.example.com',
  },
  {
    provider: circleci,
    ci: ENVS.CircleCI,
    tool: 'circleci',
    args: ['run', 'oidc', 'get', '--claims', `{"aud":"${AUD}"}`],
    shown: `circleci run oidc get --claims {"aud":"${AUD}"}`,
    docs: 'docs/keyless-ci.md, CircleCI',
    firstLine: 'Error: failed to get OIDC token: this command can only be run within a CircleCI job',
  },
])('$tool', ({ provider, ci, tool, args, shown, docs, firstLine }: { provider: CiProvider; ci: Record<string, string>; tool: string; args: string[]; shown: string; docs: string; firstLine: string }) => {
  it('is asked for a token for the audience, exactly so, and its trimmed output is the token', async () => {
    const env = toolEnv(ci, 'ok');
    expect(await provider.idToken(env, AUD, options)).toBe(`${env.FAKE_TOKEN}1`);
    expect(callsOf(env)).toEqual([args]);
  });

  it("fails with the command and its stderr's first line when the job cannot have a token", async () => {
    const env = toolEnv(ci, 'unavailable');
    expect(await failure(provider.idToken(env, AUD, options))).toBe(`no OIDC token: "${shown}" failed: ${firstLine} (${docs})`);
  });

  it('never prints a token the tool wrote to stderr, and says the exit code of a silent failure', async () => {
    const leaky = toolEnv(ci, 'leaky');
    const line = await failure(provider.idToken(leaky, AUD, options));
    expect(line).toBe(`no OIDC token: "${shown}" failed: error: token [token] was refused (${docs})`);
    expect(line).not.toContain(leaky.FAKE_TOKEN.split('.')[1]);
    expect(await failure(provider.idToken(toolEnv(ci, 'silent'), AUD, options))).toBe(`no OIDC token: "${shown}" failed: exit code 3 (${docs})`);
  });

  it('refuses output that is not a token, and output past 64 KiB, without echoing it', async () => {
    const garbage = await failure(provider.idToken(toolEnv(ci, 'garbage'), AUD, options));
    expect(garbage).toBe(`no OIDC token: "${shown}" printed no token (its output is not a compact JWS; ${docs})`);
    expect(await failure(provider.idToken(toolEnv(ci, 'chatty'), AUD, options))).toBe(`no OIDC token: "${shown}" printed more than 64 KiB (${docs})`);
  });

  it('gives up on a tool that does not answer in time', async () => {
    const started = Date.now();
    expect(await failure(provider.idToken(toolEnv(ci, 'hang'), AUD, { ...options, commandTimeoutMs: 1000 }))).toBe(`no OIDC token: "${shown}" did not answer within 1 s (${docs})`);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('says what to do when the tool is not there', async () => {
    const env = { ...ci, PATH: path.join(tmp, 'empty') };
    expect(await failure(provider.idToken(env, AUD, options))).toMatch(new RegExp(`^no OIDC token: ${tool} is not on PATH \\(.+; docs/keyless-ci\\.md, (Buildkite|CircleCI)\\)$`));
  });

  it('gets a fresh token from the tool for every renewal', async () => {
    const env = toolEnv(ci, 'ok');
    const { api, sent } = fakeApi();
    const credential = await resolveCredential(api, env, AUD, 'app_1', () => undefined);
    expect(await credential.authorization()).toBe('Bearer acc_1');
    expect(await credential.renew()).toBe(true);
    expect(await credential.authorization()).toBe('Bearer acc_2');
    expect(sent).toEqual([`${env.FAKE_TOKEN}1`, `${env.FAKE_TOKEN}2`]);
    expect(callsOf(env)).toEqual([args, args]);
  });
});

describe('a job with one token (GitLab, Bitbucket)', () => {
  const token = jws({ aud: AUD });
  it.each([
    ['GitLab CI', { ...ENVS['GitLab CI'], SHIELDGATE_ID_TOKEN: token }],
    ['Bitbucket Pipelines', { ...ENVS['Bitbucket Pipelines'], BITBUCKET_STEP_OIDC_TOKEN: token }],
  ])('%s: exchanges it once, serves the access token to its expiry, then fails clearly instead of sending it again', async (name, env) => {
    let clock = 1_000_000;
    const { api, sent } = fakeApi();
    const credential = await ciOidcCredential(api, env, AUD, 'app_1', () => undefined, detectProvider(env)!, options, () => clock);
    expect(await credential.authorization()).toBe('Bearer acc_1');
    clock += 9.5 * 60_000; // within the last minute: a CI with fresh tokens would renew here
    expect(await credential.authorization()).toBe('Bearer acc_1');
    const spent = `the access token expired and cannot be renewed: ${name} gives a job one OIDC token and the service accepts it once (wait for the scan in a later job: shieldgate-ci scan BUILD_ID --wait; or set SHIELDGATE_API_KEY)`;
    expect(await failure(credential.renew())).toBe(spent); // the service answered 401 to the access token
    clock += 31_000;
    expect(await failure(credential.authorization())).toBe(spent);
    expect(sent).toEqual([token]);
  });
});

describe('the credential of a job', () => {
  const gitlabEnv = { ...ENVS['GitLab CI'], SHIELDGATE_ID_TOKEN: jws({ aud: AUD, ref: 'main' }) };

  it('is the API key first, then the detected CI; --app is needed for the exchange; no CI is one line naming them', async () => {
    const { api, sent } = fakeApi();
    expect((await resolveCredential(api, { ...gitlabEnv, SHIELDGATE_API_KEY: 'svc_x' }, AUD, undefined, () => undefined)).kind).toBe('api_key');
    expect(await failure(resolveCredential(api, gitlabEnv, AUD, undefined, () => undefined))).toBe('--app is required for the keyless exchange (or set SHIELDGATE_API_KEY)');
    expect(await failure(resolveCredential(api, {}, AUD, 'app_1', () => undefined))).toBe(
      'no credential: set SHIELDGATE_API_KEY, or run in a CI whose OIDC token shieldgate-ci gets (GitHub Actions, GitLab CI, Buildkite, CircleCI, Bitbucket Pipelines)',
    );
    expect(sent).toEqual([]);
  });

  it('outside GitHub Actions writes no workflow command, and a refusal names the job instead of a GitHub rule', async () => {
    const written: string[] = [];
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const log: string[] = [];
    try {
      await resolveCredential(fakeApi().api, gitlabEnv, AUD, 'app_1', (line) => log.push(line));
      await expect(resolveCredential(fakeApi(401).api, gitlabEnv, AUD, 'app_1', (line) => log.push(line))).rejects.toMatchObject({ exitCode: 3 });
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(written.filter((chunk) => chunk.includes('::'))).toEqual([]);
    expect(log).toEqual([
      "The service refused this job's OIDC token for app app_1: no trust rule of the app admits it.",
      'This job: GitLab CI, refs/heads/main, https://gitlab.com/acme/app/-/jobs/42',
      "Its token's claims (decoded locally, not verified):",
      '  sub: project_path:acme/app:ref_type:branch:ref:main',
      '  ref: main',
      'GitLab CI gives a job one token and the service accepts it once: if an earlier shieldgate-ci command of this job exchanged it, that is why (one command per job: upload --wait).',
      'The trust rules of GitLab CI jobs: docs/keyless-ci.md.',
    ]);
  });

  it('in GitHub Actions still masks the access token', async () => {
    const server = http.createServer((_req, res) => res.end(JSON.stringify({ value: jws({ aud: AUD }) })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token?api-version=2.0`;
    const written: string[] = [];
    const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      const env = { GITHUB_ACTIONS: 'true', ACTIONS_ID_TOKEN_REQUEST_URL: url, ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'rt' };
      expect(await (await resolveCredential(fakeApi().api, env, AUD, 'app_1', () => undefined)).authorization()).toBe('Bearer acc_1');
    } finally {
      err.mockRestore();
      server.close();
    }
    expect(written.join('')).toContain('::add-mask::acc_1');
  });
});

describe('the command', () => {
  function io(env: Record<string, string>) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c) => (out += c));
    stderr.on('data', (c) => (err += c));
    return { io: { env: { SHIELDGATE_URL: `${AUD}/`, ...env }, stdout, stderr, tty: false }, out: () => out, err: () => err };
  }

  it('fails with one line naming the snippet on GitLab without the id_tokens: variable, before anything is sent', async () => {
    const run = io(ENVS['GitLab CI']);
    expect(await main(['whoami', '--app', 'app_1'], run.io)).toBe(1);
    expect(run.err()).toBe(`shieldgate-ci: no OIDC token: add "id_tokens: SHIELDGATE_ID_TOKEN: aud: ${AUD}" to the job (docs/keyless-ci.md, GitLab)\n`);
    const named = io(ENVS['GitLab CI']);
    expect(await main(['whoami', '--app', 'app_1', '--id-token-var', 'RELEASE_TOKEN'], named.io)).toBe(1);
    expect(named.err()).toContain('"id_tokens: RELEASE_TOKEN: aud: ');
  });

  it('refuses an --id-token-var that is no variable name, and documents the option', async () => {
    const run = io(ENVS['GitLab CI']);
    expect(await main(['whoami', '--app', 'app_1', '--id-token-var', 'A-B'], run.io)).toBe(1);
    expect(run.err()).toBe('shieldgate-ci: --id-token-var must be a variable name (letters, digits, _), not "A-B"\n');
    const help = io({});
    expect(await main(['--help'], help.io)).toBe(0);
    expect(help.out()).toMatch(/shieldgate-ci whoami \[--app APP_ID\] \[--id-token-var NAME\]/);
    expect(help.out()).toContain('--id-token-var names, default SHIELDGATE_ID_TOKEN');
  });

  it('prints no token a failing tool wrote, on one line', async () => {
    const env = toolEnv(ENVS.Buildkite, 'leaky');
    const run = io(env);
    expect(await main(['whoami', '--app', 'app_1'], run.io)).toBe(1);
    expect(run.err().split('\n')).toHaveLength(2);
    expect(run.err()).not.toContain(env.FAKE_TOKEN);
    expect(callsOf(env)).toEqual([['oidc', 'request-token', '--audience', AUD, '--claim', 'organization_id']]); // the trailing slash is not the audience
  });
});

it("keeps a tool's stderr line short and printable", () => {
  expect(stderrLine('\n\n  \u001b[31mboom\u001b[0m\nsecond')).toBe('[31mboom [0m');
  expect(stderrLine('x'.repeat(500))).toHaveLength(200);
});
