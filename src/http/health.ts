import type { RequestHandler } from 'express';
import type { Deps } from '../core/deps';

/** Liveness: the process answers. `service` lets a second start on a busy port say that a shieldgate holds it. */
export const healthz: RequestHandler = (_req, res) => {
  res.status(200).json({ status: 'ok', service: 'shieldgate' });
};

/** Readiness: the database answers, and Redis when one is configured. */
export function readyz(deps: Deps): RequestHandler {
  return async (_req, res) => {
    const checks: Record<string, 'ok' | 'down'> = {};
    const withTimeout = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
    try {
      await withTimeout(deps.db.command({ ping: 1 }));
      checks.database = 'ok';
    } catch {
      checks.database = 'down';
    }
    if (deps.redis) {
      try {
        await withTimeout(deps.redis.ping());
        checks.redis = 'ok';
      } catch {
        checks.redis = 'down';
      }
    }
    const ready = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  };
}
