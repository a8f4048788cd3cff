import { call, type ApiClient, type Build, type CredentialSource, type Scan } from './api';
import { CliError } from './errors';
import { sleep } from './retry';

export async function getBuild(api: ApiClient, credential: CredentialSource, id: string): Promise<Build> {
  return (await call('read build', credential, (headers) => api.GET('/v1/builds/{id}', { params: { path: { id } }, headers }))).data;
}

export async function getScan(api: ApiClient, credential: CredentialSource, id: string): Promise<Scan> {
  return (await call('read scan', credential, (headers) => api.GET('/v1/scans/{id}', { params: { path: { id } }, headers }))).data;
}

/** Polls the build until its static scan exists: 1 s, then longer up to 10 s between reads, until `timeoutMs`. */
export async function waitForStaticScan(api: ApiClient, credential: CredentialSource, buildId: string, timeoutMs: number, log: (line: string) => void): Promise<Scan> {
  const deadline = Date.now() + timeoutMs;
  let delayMs = 1000;
  let said = false;
  for (;;) {
    const build = await getBuild(api, credential, buildId);
    const summary = build.scans.find((scan) => scan.engine === 'static');
    if (summary) return getScan(api, credential, summary.id);
    if (Date.now() + delayMs > deadline) {
      throw new CliError(`no static scan of build ${buildId} after ${Math.round(timeoutMs / 1000)} s (--timeout)`);
    }
    if (!said) log(`waiting for the static scan of build ${buildId}...`);
    said = true;
    await sleep(delayMs);
    delayMs = Math.min(10_000, Math.round(delayMs * 1.5));
  }
}
