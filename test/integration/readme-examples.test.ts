// The documentation's examples run as written against the real service. Every ```sh/```bash/```yaml block of the
// README and the CI documents that talks to the service (its placeholder address, the client or the Action) is run
// in order, one app per document: shell blocks by bash -eo pipefail (as a CI step runs them), workflows step by step
// as GitHub's runner would, with the job's OIDC token from the token-endpoint emulator and the test issuer. Only the
// placeholders change (address, app id, key); what the app's own build makes is the fixture APK. So a trust rule that
// lacks a scope its own step needs, or an install line that fetches by name, fails here. README's first call (the
// operator CLI making an app and a key, then the key's first request) runs command by command as a reader would,
// each answer's `...` values copied into the commands after it, on the test's service and database.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startHarness, bearer, readJson, type Harness } from '../support/harness';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { startGitHubTokenEndpoint, type GitHubTokenEndpoint } from '../support/github-token-endpoint';
import { androidManifest, buildApk, cleanupFixtures } from '../fixtures/build-packages';
import { packRelease, type Release } from '../../client/scripts/pack-release';

const ROOT = path.join(__dirname, '..', '..');
const DOCS = ['README.md', 'client/README.md', 'docs/ci-client.md', 'docs/keyless-ci.md'];
const TALKS = /https:\/\/api\.example\.com|\$BASE\/|shieldgate-ci|\/shieldgate\/action@/;

interface Block { doc: string; line: number; lang: string; text: string }

/** Fenced blocks, indented ones (in lists) included, dedented by their fence's indentation. */
function blocks(doc: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, doc), 'utf8').split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\w*)/.exec(lines[i]);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(open[1].length));
    found.push({ doc, line: i + 1, lang: open[2], text: body.join('\n') + '\n' });
    i = j;
  }
  return found;
}
/** Other CIs' pipelines (first line `# .gitlab-ci.yml`...): keyless-pipelines.test.ts runs them as their CIs do. */
const otherCiPipeline = (b: Block) => b.lang === 'yaml' && /^# (?!\.github\/workflows\/)\S+\.ya?ml\n/.test(b.text);
const examples = (doc: string) => blocks(doc).filter((b) => ['sh', 'bash', 'yaml'].includes(b.lang) && TALKS.test(b.text) && !otherCiPipeline(b));

let h: Harness;
let issuer: OidcIssuer;
let github: GitHubTokenEndpoint;
let release: Release;
let apk: string;
let tmp: string;
let claims: Record<string, unknown> = {};

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-examples-'));
  release = packRelease(path.join(tmp, 'release'));
  issuer = await startOidcIssuer();
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on' } });
  github = await startGitHubTokenEndpoint((audience) => issuer.sign(issuer.claims({ audience, now: h.clock.now() }, claims)));
  // A healthy release build, as an app's own build would make it (the examples gate on grade C).
  apk = await buildApk({ manifest: androidManifest({ minSdk: 26, targetSdk: 36, application: { 'android:allowBackup': 'true' } }), sign: 'release' });
}, 180_000);

afterAll(async () => {
  await h?.close();
  await github?.close();
  await issuer?.close();
  await cleanupFixtures();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface Context { appId: string; apiKey: string; adminKey: string; work: string; env: Record<string, string> }

async function context(): Promise<Context> {
  const { appId } = await h.newApp();
  const { key: apiKey } = await h.newKey(appId, ['builds:write', 'builds:read', 'scans:read']);
  const { key: adminKey } = await h.newKey(appId, ['rules:write', 'rules:read']);
  const work = fs.mkdtempSync(path.join(tmp, 'work-'));
  for (const f of [release.tarball, `${release.tarball}.sha256`]) fs.copyFileSync(f, path.join(work, path.basename(f)));
  fs.copyFileSync(apk, path.join(work, 'app-release.apk'));
  const cache = fs.mkdtempSync(path.join(tmp, 'npm-cache-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '', HOME: work, BASE: h.baseUrl, APP_ID: appId, RULES_KEY: adminKey, SHIELDGATE_ADMIN_KEY: adminKey,
    SHIELDGATE_CI_SHA256: release.sha256,
    // An empty cache and no reachable registry: an install line that needs one fails.
    npm_config_cache: cache, npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false',
  };
  return { appId, apiKey, adminKey, work, env };
}

/** The placeholders of the documents, made real. */
const concrete = (text: string, c: Context) => text.replaceAll('https://api.example.com', h.baseUrl).replaceAll('app_3fK9xQ2mZ', c.appId).replaceAll('svc_live_...', c.apiKey);

/** Asynchronous: the service answering the command runs in this process. */
function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; out: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: `${stdout}${stderr}`, stdout });
    });
  });
}
const bash = (script: string, cwd: string, env: Record<string, string>) => run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], cwd, env);

/** The fingerprint of the app's latest scan's finding the block names (for blocks that set FINGERPRINT=...). */
async function fingerprintFor(text: string, c: Context): Promise<string> {
  const findingId = /"findingId":"([\w.-]+)"/.exec(text)![1];
  for (const doc of await h.deps.repos.builds.listForApp(c.appId, 100)) {
    const build = await readJson(await h.api(`/v1/builds/${doc._id}`, { headers: bearer(c.apiKey) }));
    const scanRef = build.scans.find((s: { engine: string }) => s.engine === 'static');
    const scan = scanRef && (await readJson(await h.api(`/v1/scans/${scanRef.id}`, { headers: bearer(c.apiKey) })));
    const finding = scan?.findings.find((f: { id: string }) => f.id === findingId);
    if (finding) return finding.fingerprint;
  }
  throw new Error(`no scan of the app has a finding ${findingId}`);
}

/** `# {json}` after a command is its answer: compared with what it printed ("rul_..." stands for any id so begun). */
function expectAnswer(text: string, out: string): void {
  const comment = /^# (\{.*\})\s*$/m.exec(text);
  if (!comment) return;
  const like = (want: unknown): unknown =>
    typeof want === 'string' && want.endsWith('...') ? expect.stringMatching(new RegExp(`^${want.slice(0, -3)}`)) : Array.isArray(want) ? want.map(like) : want && typeof want === 'object' ? Object.fromEntries(Object.entries(want).map(([k, v]) => [k, like(v)])) : want;
  expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual(like(JSON.parse(comment[1])));
}

async function runShell(block: Block, c: Context): Promise<void> {
  let script = concrete(block.text, c);
  if (/^FINGERPRINT=\.\.\./m.test(script)) script = script.replace(/^FINGERPRINT=\.\.\./m, `FINGERPRINT=${await fingerprintFor(script, c)}`);
  const r = await bash(script, c.work, c.env);
  expect({ at: `${block.doc}:${block.line}`, code: r.code, out: r.out }).toEqual({ at: `${block.doc}:${block.line}`, code: 0, out: expect.anything() });
  // curl exits 0 on a 4xx: a problem document in the output is a failed example too.
  expect(r.out).not.toMatch(/"status":\s*[45]\d\d/);
  expectAnswer(block.text, r.stdout);
}

/** ${{ steps.ID.outputs.NAME }} and ${{ env.NAME }}; any other expression is one this runner does not know. */
function expand(text: string, outputs: Record<string, Record<string, string>>, env: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const step = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (step) return outputs[step[1]]?.[step[2]] ?? '';
    const variable = /^env\.(\w+)$/.exec(expr);
    if (variable) return env[variable[1]] ?? '';
    throw new Error(`expression not supported by the test runner: ${expr}`);
  });
}

function readOutputs(file: string): Record<string, string> {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const out: Record<string, string> = {};
  const re = /^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out[m[1]] = m[3];
  return out;
}

/** Runs each job's steps as the runner would, in a workspace holding what `actions/checkout` and the build made. */
async function runWorkflow(block: Block, c: Context): Promise<void> {
  const file = /^# \.github\/workflows\/([\w.-]+\.ya?ml)$/m.exec(block.text)?.[1];
  if (!file) throw new Error(`${block.doc}:${block.line}: a workflow example starts with its path (# .github/workflows/NAME.yml)`);
  const wf = YAML.parse(concrete(block.text, c));
  const on = typeof wf.on === 'string' ? { [wf.on]: {} } : Array.isArray(wf.on) ? Object.fromEntries(wf.on.map((e: string) => [e, {}])) : wf.on;
  const event = Object.keys(on)[0];
  const ref = `refs/heads/${on[event]?.branches?.[0] ?? 'main'}`;
  for (const [jobName, job] of Object.entries<Record<string, any>>(wf.jobs)) { // eslint-disable-line @typescript-eslint/no-explicit-any
    const permissions = { ...wf.permissions, ...job.permissions };
    const environment = typeof job.environment === 'string' ? job.environment : job.environment?.name;
    const workflowRef = `acme/mobile-app/.github/workflows/${file}@${ref}`;
    claims = { ref, event_name: event, environment, workflow_ref: workflowRef, job_workflow_ref: workflowRef };
    const jobEnv: Record<string, string> = {
      ...c.env, ...(job.env ?? {}), GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: c.work, GITHUB_REPOSITORY: 'acme/mobile-app', GITHUB_REF: ref, GITHUB_EVENT_NAME: event,
      GITHUB_SHA: 'a3f1c2e7d9b04c5e8f6a7b2c1d0e9f8a7b6c5d4e', GITHUB_RUN_ID: String(Date.now()), GITHUB_RUN_ATTEMPT: '1', RUNNER_TEMP: fs.mkdtempSync(path.join(tmp, 'runner-')),
      // The runner gives a job the token endpoint only when the workflow grants id-token: write.
      ...(permissions['id-token'] === 'write' ? github.env : {}),
    };
    const outputs: Record<string, Record<string, string>> = {};
    for (const [index, step] of (job.steps as Array<Record<string, any>>).entries()) { // eslint-disable-line @typescript-eslint/no-explicit-any
      const at = `${block.doc}:${block.line} job ${jobName} step ${index + 1}`;
      const dir = fs.mkdtempSync(path.join(tmp, 'step-'));
      const env = { ...jobEnv, GITHUB_OUTPUT: path.join(dir, 'output'), GITHUB_STEP_SUMMARY: path.join(dir, 'summary.md') };
      const uses: string = step.uses ?? '';
      if (step.if !== undefined) {
        const sarifIf = /^always\(\) && hashFiles\('([^']+)'\) != ''$/.exec(String(step.if).trim());
        if (!sarifIf) throw new Error(`${at}: condition not supported by the test runner: ${step.if}`);
        if (!fs.existsSync(path.join(c.work, sarifIf[1]))) continue;
      }
      if (uses.startsWith('actions/checkout@')) continue;
      if (/^\.\/gradlew /.test(step.run ?? '')) {
        // The app's build: its package lands where the shieldgate step reads it.
        for (const s of job.steps) if (s.with?.file) fs.mkdirSync(path.dirname(path.join(c.work, s.with.file)), { recursive: true }), fs.copyFileSync(apk, path.join(c.work, s.with.file));
        continue;
      }
      if (uses.startsWith('github/codeql-action/upload-sarif@')) {
        const sarif = JSON.parse(fs.readFileSync(path.join(c.work, step.with.sarif_file), 'utf8'));
        expect({ at, version: sarif.version }).toEqual({ at, version: '2.1.0' });
        continue;
      }
      let r: { code: number; out: string; stdout: string };
      if (/\/shieldgate\/action@/.test(uses)) {
        const inputs = Object.fromEntries(Object.entries<string>(step.with ?? {}).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, expand(String(v), outputs, env)]));
        r = await run(process.execPath, [path.join(ROOT, 'action', 'dist', 'index.js')], c.work, { ...env, ...inputs });
      } else if (step.run) {
        r = await bash(expand(step.run, outputs, env), c.work, env);
      } else {
        throw new Error(`${at}: step not supported by the test runner: ${uses}`);
      }
      expect({ at, code: r.code, out: r.out }).toEqual({ at, code: 0, out: expect.anything() });
      expect(r.out).not.toMatch(/"status":\s*[45]\d\d/);
      if (step.id) outputs[step.id] = readOutputs(env.GITHUB_OUTPUT);
    }
  }
}

it('never tells anyone to run the client by name from a registry (a bare npx shieldgate-ci)', () => {
  const bare = DOCS.flatMap(blocks).filter((b) => /npx (?!--no -- )[^\n]*shieldgate-ci|npx shieldgate-ci/.test(b.text));
  expect(bare.map((b) => `${b.doc}:${b.line}`)).toEqual([]);
});

/** A command and the answer its `# {json}` comment promises ("x..." stands for a value so begun; ", ...}" for more fields). */
interface Step { command: string; answer: string | null }

function steps(block: Block): Step[] {
  const out: Step[] = [];
  for (const line of block.text.split('\n')) {
    const answer = /^# (\{.*\})/.exec(line);
    if (answer && out.length) out[out.length - 1].answer = answer[1];
    else if (line.trim() && !line.startsWith('#')) out.push({ command: line, answer: null });
  }
  return out;
}

/** The answer as a Jest matcher, and the placeholders it names mapped to what the command really printed. */
function answerOf(promised: string, printed: Record<string, unknown>): { want: unknown; copied: Array<[string, string]> } {
  const partial = /,\s*\.\.\.\s*\}$/.test(promised);
  const fields = JSON.parse(partial ? promised.replace(/,\s*\.\.\.\s*\}$/, '}') : promised) as Record<string, unknown>;
  const copied: Array<[string, string]> = [];
  const want = Object.fromEntries(
    Object.entries(fields).map(([k, v]) => {
      if (typeof v !== 'string' || !v.endsWith('...')) return [k, v];
      if (v.length > 3 && typeof printed[k] === 'string') copied.push([v, printed[k] as string]);
      return [k, expect.stringMatching(new RegExp(`^${v.slice(0, -3)}.`))];
    }),
  );
  return { want: partial ? expect.objectContaining(want) : want, copied };
}

it("runs README's first call as written: an app and a key by the operator CLI, then the key's first request", async () => {
  const block = blocks('README.md').find((b) => b.lang === 'sh' && /npx --no shieldgate app create/.test(b.text));
  expect(block).toBeDefined();
  const home = fs.mkdtempSync(path.join(tmp, 'first-call-'));
  // The service of this test and its database stand for the embedded defaults' (the address is the only placeholder
  // of the text itself); npx --no runs the CLI linked into node_modules/.bin, never anything from a registry.
  const env = {
    PATH: process.env.PATH ?? '', HOME: home, MONGODB_URI: h.config.mongodbUri!, MONGODB_DATABASE: h.config.mongodbDatabase, REDIS_URL: '',
    npm_config_cache: path.join(home, 'npm-cache'), npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false',
  };
  const copied: Array<[string, string]> = [['http://127.0.0.1:8080', h.baseUrl]];
  const printed: Array<Record<string, unknown>> = [];
  for (const step of steps(block!)) {
    const command = copied.reduce((text, [from, to]) => text.replaceAll(from, to), step.command);
    const r = await bash(command, ROOT, env);
    const at = `README.md:${block!.line} ${step.command}`;
    expect({ at, code: r.code, out: r.out }).toEqual({ at, code: 0, out: r.code === 0 ? expect.anything() : '' });
    const answer = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    printed.push(answer);
    if (!step.answer) continue;
    const promised = answerOf(step.answer, answer);
    expect({ at, answer }).toEqual({ at, answer: promised.want });
    copied.push(...promised.copied);
  }
  // Three commands: the app, its key, and whoami answered for that key of that app.
  expect(printed).toHaveLength(3);
  const [app, key, whoami] = printed;
  expect(key.id).toEqual(expect.any(String));
  expect(whoami).toMatchObject({ appId: app.id, scopes: ['builds:write', 'builds:read', 'scans:read', 'threats:read'] });
});

it('finds the examples it runs', () => {
  expect(examples('client/README.md').length).toBeGreaterThanOrEqual(1);
  expect(examples('docs/ci-client.md').map((b) => b.lang)).toEqual(['sh', 'yaml', 'sh']);
  expect(examples('docs/keyless-ci.md').map((b) => b.lang)).toEqual(['sh', 'yaml', 'sh', 'sh']);
});

describe.each(DOCS)('%s', (doc) => {
  it('runs each example that talks to the service, in order, as written', async () => {
    const c = await context();
    for (const block of examples(doc)) {
      if (block.lang === 'yaml') await runWorkflow(block, c);
      else await runShell(block, c);
    }
  }, 300_000);
});
