// The service for npm run bench:attest, in a process of its own as src/main.ts would run it (the same createDeps,
// createHttpApp and HTTP server budgets; no job runner or retention sweeps, which the bench does not exercise), but
// with a clock the bench sets over IPC: real attestations verify only at the time they were made (the Pixel chain in
// March 2023, the iPhone attestation in November 2020), and src/main.ts always runs on the system clock.
//   { clockAt: ISO string | null } -> sets the clock (it then runs on from there at the real pace; null: system time),
//   answered { clockSet: ISO string }.
import type { Clock } from '../src/core/clock';
import { loadConfig } from '../src/core/config';
import { createLogger } from '../src/core/logger';
import { createDeps } from '../src/bootstrap';
import { createHttpApp } from '../src/app';
import { createHttpServer } from '../src/http/server';

/** System time plus an offset: set to a moment, it runs on from there. */
class ShiftedClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  set(at: Date | null): void {
    this.offsetMs = at ? at.getTime() - Date.now() : 0;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const clock = new ShiftedClock();
  const server = createHttpServer(config);
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const deps = await createDeps(config, { clock, logger: createLogger(config.logLevel) });
  const { app } = await createHttpApp(deps);
  server.on('request', app);
  process.on('message', (message: { clockAt?: string | null }) => {
    if (!('clockAt' in message)) return;
    clock.set(message.clockAt ? new Date(message.clockAt) : null);
    process.send!({ clockSet: clock.now().toISOString() });
  });
  process.on('SIGTERM', () => process.exit(0));
  process.send!({ ready: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
