/**
 * `shieldgate-ci`: upload a build from CI, wait for its scan and gate on the grade.
 * Exit codes: 0 passed, 1 usage or service error (one line), 2 gate failed, 3 OIDC exchange refused.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { call, createApiClient, type ApiClient, type CredentialSource, type Scan } from './api';
import { detectCommit, idempotencyKey, KNOWN_COMMIT_VARIABLES } from './commit';
import { resolveCredential } from './credentials';
import { CliError, EXIT, type ExitCode } from './errors';
import { jsonLine, printable, printableLines } from './log-text';
import { digestFile } from './file-digest';
import { evaluateGate } from './gate';
import { annotate, appendSummary, setOutputs, type Env } from './github';
import { createProgress } from './progress';
import { diffLine, findingsReport, isSerious, signerLine, summaryMarkdown } from './report';
import { isSuppressed, type ComparedScan } from './baseline';
import { signerFacts } from './signer';
import { DEFAULT_MANIFEST, toSarif } from './sarif';
import { uploadArtifact } from './upload';
import { getBuild, getScan, waitForStaticScan } from './wait';
import { VERSION } from './version';
import { OPTIONS, failOnNew, failUnder, idTokenVar, required, timeoutMs, waits, type Values } from './options';

export { VERSION };

const USAGE = `Usage:
  shieldgate-ci upload --app APP_ID --file PATH --platform android|ios --version V [--commit SHA]
                       [--wait] [--timeout SECONDS] [--fail-under GRADE] [--fail-on-new SEVERITY] [--sarif FILE]
                       [--manifest-path PATH] [--id-token-var NAME] [--json]
  shieldgate-ci scan BUILD_ID [--app APP_ID] [--wait] [--timeout SECONDS] [--fail-under GRADE] [--fail-on-new SEVERITY]
                       [--sarif FILE] [--id-token-var NAME] [--json]
  shieldgate-ci whoami [--app APP_ID] [--id-token-var NAME] [--json]

Server: SHIELDGATE_URL. Credential: SHIELDGATE_API_KEY, else the job's OIDC token (audience: SHIELDGATE_URL)
exchanged for the app given by --app, got by the client itself in GitHub Actions (permissions id-token: write),
GitLab CI (the id_tokens: variable --id-token-var names, default SHIELDGATE_ID_TOKEN), Buildkite
(buildkite-agent oidc request-token), CircleCI (circleci run oidc get) and Bitbucket Pipelines (the step's oidc).
--commit defaults to the variable of the CI the job runs in (GITHUB_SHA, CI_COMMIT_SHA, BUILDKITE_COMMIT,
CIRCLE_SHA1, BITBUCKET_COMMIT; also BITRISE_GIT_COMMIT, BUILD_SOURCEVERSION), else HEAD of the git repository
that holds --file.
--fail-on-new low|medium|high|critical fails on a finding new since the last build's scan (not suppressed) at or
above it; the first scan of a package is the baseline and fails no --fail-on-new.
--fail-under, --fail-on-new and --sarif imply --wait. Exit codes: 0 passed, 1 error, 2 gate failed, 3 OIDC exchange
refused.`;

export interface Io {
  env: Env;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Progress bar on a terminal, a line every 10 % otherwise. */
  tty: boolean;
}

interface Run {
  io: Io;
  values: Values;
  serverUrl: string;
  api: ApiClient;
  /** Human lines: stdout, or stderr when --json keeps stdout for the result. */
  say: (line: string) => void;
}

function serverUrl(env: Env): string {
  const url = env.SHIELDGATE_URL;
  if (!url) throw new CliError('SHIELDGATE_URL is not set (the address of the shieldgate service, e.g. https://api.example.com)');
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new CliError(`SHIELDGATE_URL is not an http(s) address: "${url}"`);
  // The OIDC audience is the service's public address exactly, without a trailing slash.
  return url.replace(/\/+$/, '');
}

/** Prints the scan, writes SARIF, summary, annotations and outputs, and applies the gate. */
function finish(run: Run, scan: Scan, buildId: string): ExitCode {
  const { io, values, say } = run;
  const gates = { failUnder: failUnder(values), failOnNew: failOnNew(values) };
  const gate = evaluateGate(scan, gates);
  say(`scan ${scan.id}: grade ${scan.grade}, score ${scan.score}, ${scan.findings.length} finding(s)${diffLine(scan)}`);
  const signer = signerLine(scan);
  if (signer) say(signer);
  findingsReport(scan).forEach(say);
  gate.notes.forEach(say);
  if (values.sarif && gate.analysed) {
    const manifestPath = values['manifest-path'] ?? DEFAULT_MANIFEST[scan.target.platform];
    const sarif = toSarif(scan, { manifestPath, toolVersion: VERSION, informationUri: run.serverUrl });
    fs.writeFileSync(values.sarif, JSON.stringify(sarif, null, 2) + '\n');
    say(`SARIF written to ${values.sarif}`);
  } else if (values.sarif) {
    // A scan that analysed nothing would tell code scanning that every open alert is fixed: no SARIF, and none left
    // from an earlier step either.
    fs.rmSync(values.sarif, { force: true });
    say(`no SARIF written: the package could not be analysed`);
  }
  // Accepted findings are not shouted about on every build; their suppression is in the table and the summary.
  for (const f of scan.findings.filter((x) => isSerious(x) && !isSuppressed(x))) annotate(io.env, 'error', `shieldgate ${f.severity}: ${f.id}`, `${f.title}. Fix: ${f.fix}`, io.stdout);
  appendSummary(io.env, summaryMarkdown(scan, buildId, { ...gates, ...gate }));
  setOutputs(io.env, { 'build-id': buildId, 'scan-id': scan.id, grade: scan.grade, score: String(scan.score) });
  if (values.json) {
    const { baseline = null, diff = null, fixedFindings = [], unsuppressed = [] } = scan as ComparedScan;
    io.stdout.write(jsonLine({ buildId, scanId: scan.id, grade: scan.grade, score: scan.score, gate, signer: signerFacts(scan), baseline, diff, fixedFindings, unsuppressed, findings: scan.findings }));
  }
  if (!gate.passed) {
    io.stderr.write(`shieldgate-ci: gate failed: ${printable(gate.reason ?? '')}\n`);
    return EXIT.gate;
  }
  return EXIT.ok;
}

async function upload(run: Run): Promise<ExitCode> {
  const { io, values, api, say } = run;
  const appId = required(values, 'app');
  const file = required(values, 'file');
  const platform = required(values, 'platform');
  const version = required(values, 'version');
  if (platform !== 'android' && platform !== 'ios') throw new CliError('--platform must be android or ios');
  failUnder(values);
  failOnNew(values);
  const timeout = timeoutMs(values);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliError(`--file ${file} is not a file`);

  const credential = await resolveCredential(api, io.env, run.serverUrl, appId, (lines) => io.stderr.write(printableLines(lines) + '\n'), { idTokenVar: idTokenVar(values) });
  const digest = await digestFile(file);
  const { commit, source } = detectCommit(values.commit, io.env, file);
  if (!commit) say(`no commit known: pass --commit SHA (none from ${KNOWN_COMMIT_VARIABLES.join(', ')}, and ${file} is in no git repository); the preview scan reports preview.commit-missing`);
  else if (source === 'git') say(`commit ${commit.slice(0, 12)}… (HEAD of the git repository holding ${file})`);
  const key = idempotencyKey(io.env, digest.sha256);
  const { data: build, response } = await call('register build', credential, (headers) =>
    api.POST('/v1/builds', {
      body: { platform, version, commit, artifact: digest },
      params: { header: key ? { 'Idempotency-Key': key } : {} },
      headers,
    }),
  );
  const replayed = response.headers.get('idempotent-replayed') === 'true';
  say(`build ${build.id} ${replayed ? 'was already registered by this run' : 'registered'} (${platform} ${version}, ${(digest.sizeBytes / 1048576).toFixed(1)} MB, sha256 ${digest.sha256.slice(0, 12)}…)`);
  setOutputs(io.env, { 'build-id': build.id });

  const progress = createProgress(digest.sizeBytes, io.stderr, io.tty);
  await uploadArtifact({ api, credential, build, file, progress, log: (line) => io.stderr.write(printable(line) + '\n') });
  say(`artifact of build ${build.id} uploaded`);

  if (!waits(values)) {
    if (values.json) io.stdout.write(jsonLine({ buildId: build.id }));
    return EXIT.ok;
  }
  const scan = await waitForStaticScan(api, credential, build.id, timeout, say);
  return finish(run, scan, build.id);
}

async function scanCommand(run: Run, buildId: string | undefined): Promise<ExitCode> {
  const { io, values, api } = run;
  if (!buildId) throw new CliError('scan needs a BUILD_ID');
  failUnder(values);
  failOnNew(values);
  const timeout = timeoutMs(values);
  const credential = await resolveCredential(api, io.env, run.serverUrl, values.app, (lines) => io.stderr.write(printableLines(lines) + '\n'), { idTokenVar: idTokenVar(values) });
  if (waits(values)) return finish(run, await waitForStaticScan(api, credential, buildId, timeout, run.say), buildId);
  const build = await getBuild(api, credential, buildId);
  const latest = build.scans.find((s) => s.engine === 'static') ?? build.scans[build.scans.length - 1];
  if (!latest) throw new CliError(`build ${buildId} has no scan yet`);
  return finish(run, await getScan(api, credential, latest.id), buildId);
}

async function whoami(run: Run): Promise<ExitCode> {
  const { io, values, api } = run;
  const credential: CredentialSource = await resolveCredential(api, io.env, run.serverUrl, values.app, (lines) => io.stderr.write(printableLines(lines) + '\n'), {
    idTokenVar: idTokenVar(values),
  });
  const { data } = await call('whoami', credential, (headers) => api.GET('/v1/whoami', { headers }));
  if (values.json) io.stdout.write(jsonLine(data));
  else run.say(`app ${data.appId} (${data.plan}), ${data.auth}, scopes ${data.scopes.join(' ')}${data.expiresAt ? `, expires ${data.expiresAt}` : ''}`);
  return EXIT.ok;
}

/** Runs one command; resolves with its exit code (never throws, never calls process.exit). */
export async function main(argv: string[], io: Io = { env: process.env, stdout: process.stdout, stderr: process.stderr, tty: Boolean(process.stderr.isTTY) }): Promise<ExitCode> {
  try {
    if (argv[0] === '--version') {
      io.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${(error as Error).message.split('\n')[0]} (see shieldgate-ci --help)`);
    }
    const { values, positionals } = parsed;
    const [command, ...rest] = positionals;
    if (values.help || !command) {
      io.stdout.write(USAGE + '\n');
      return values.help ? EXIT.ok : EXIT.error;
    }
    const url = serverUrl(io.env);
    const out = values.json ? io.stderr : io.stdout;
    const run: Run = { io, values, serverUrl: url, api: createApiClient(url, `shieldgate-ci/${VERSION}`), say: (line) => out.write(printable(line) + '\n') };
    switch (command) {
      case 'upload':
        if (rest.length) throw new CliError(`unexpected argument "${rest[0]}"`);
        return await upload(run);
      case 'scan':
        return await scanCommand(run, rest[0]);
      case 'whoami':
        return await whoami(run);
      default:
        throw new CliError(`unknown command "${command}" (upload, scan, whoami)`);
    }
  } catch (error) {
    if (error instanceof CliError) {
      // A refused exchange has already printed its report.
      if (error.exitCode !== EXIT.refused) io.stderr.write(`shieldgate-ci: ${printable(error.message)}\n`);
      return error.exitCode;
    }
    io.stderr.write(`shieldgate-ci: unexpected error: ${printable((error as Error).message ?? String(error))}\n`);
    return EXIT.error;
  }
}
