/** Jest global teardown: stops the servers that global-setup.ts started (none when all were given by URL). */
import { TEST_BED_STOP, type StopTestBed } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const stop = (globalThis as Record<symbol, unknown>)[TEST_BED_STOP] as StopTestBed | undefined;
  await stop?.();
}
