import type { RequestHandler } from 'express';

/**
 * Middlewares run one after the other as one: a router crosses one layer instead of one per step (each layer costs a
 * path match and a hop through the router's loop). An error skips the remaining steps, as in a router.
 */
export function inSequence(steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      if (error) return next(error);
      if (i === steps.length) return next();
      void steps[i++](req, res, step);
    };
    step();
  };
}
