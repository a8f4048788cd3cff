import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import type { Logger } from '../core/logger';
import { WINDOW_SECONDS } from './plans';
import { metrics } from '../metrics/registry';

/** The kinds of bucket (the part of a bucket's name before its id): the refusal metric's label, never the id. */
const BUCKET_KINDS = new Set(['key', 'rule', 'ip', 'gql-staff', 'gql-cost', 'gql-ip']);

export function bucketKind(bucket: string): string {
  const kind = bucket.slice(0, Math.max(0, bucket.indexOf(':')));
  return BUCKET_KINDS.has(kind) ? kind : 'other';
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number; // until the window resets
}

export interface RateLimiter {
  /**
   * Takes `points` (one request, or what an operation costs) from the bucket's `limit` per window. A refusal that
   * takes more than one point gives them back: a costly operation refused runs nothing, and a cheaper one that fits
   * what is left still may.
   */
  consume(bucket: string, limit: number, points?: number): Promise<RateDecision>;
}

/**
 * Fixed 60 s windows per bucket, via rate-limiter-flexible. With Redis the counters are shared by every instance;
 * when Redis fails, the in-process insurance limiter answers until Redis is back, so the service keeps serving.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly byLimit = new Map<number, RateLimiterAbstract>();

  constructor(
    private readonly redis: Redis | null,
    private readonly logger: Logger,
  ) {}

  private limiterFor(limit: number): RateLimiterAbstract {
    let limiter = this.byLimit.get(limit);
    if (limiter) return limiter;
    const memory = new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS, keyPrefix: `rl${limit}` });
    limiter = this.redis
      ? new RateLimiterRedis({
          storeClient: this.redis,
          points: limit,
          duration: WINDOW_SECONDS,
          keyPrefix: `rl${limit}`,
          // A Redis that is down or reconnecting must not stall requests: fail over to memory at once.
          rejectIfRedisNotReady: true,
          insuranceLimiter: memory,
        })
      : memory;
    this.byLimit.set(limit, limiter);
    return limiter;
  }

  async consume(bucket: string, limit: number, points = 1): Promise<RateDecision> {
    const limiter = this.limiterFor(limit);
    try {
      const res = await limiter.consume(bucket, points);
      return decision(true, limit, res);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        metrics.rateLimitRefusals.inc({ bucket: bucketKind(bucket) });
        if (points > 1) return decision(false, limit, await giveBack(limiter, bucket, points, rejection));
        return decision(false, limit, rejection);
      }
      // Both stores failed: letting the request through beats refusing every caller.
      this.logger.error({ err: rejection }, 'rate limiter failed; request allowed');
      return { allowed: true, limit, remaining: limit, resetSeconds: WINDOW_SECONDS };
    }
  }
}

/** The refused points handed back; the refusal as it was if that fails (the window's end frees them anyway). */
async function giveBack(limiter: RateLimiterAbstract, bucket: string, points: number, refused: RateLimiterRes): Promise<RateLimiterRes> {
  try {
    return await limiter.reward(bucket, points);
  } catch {
    return refused;
  }
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
