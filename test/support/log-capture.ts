import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/logger';
import type { Harness } from './harness';

/**
 * Points the service's logger at a fresh collector (info level) and returns the lines it writes: the access log
 * writes through the logger as it is when a request arrives, so each test that calls this reads only its own lines.
 */
export function captureLogs(h: Harness): string[] {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  (h.deps as { logger: unknown }).logger = createLogger('info', sink);
  return lines;
}

/** The access log's lines (one per request) among those captured. */
export const accessLines = (lines: string[]) => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

/** Waits until `check` holds (a line is written after the answer is sent), failing after 10 s naming `what`. */
export async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
