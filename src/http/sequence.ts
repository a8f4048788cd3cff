import type { RequestHandler } from 'express';

/**
 * Middlewares run one after the other as one: a router crosses one layer instead of one per step (each layer costs a
 * path match and a hop through the router's loop). Errors go as a router sends them: a step's error (passed to next,
 * thrown, or the rejection of the promise it returns) skips the remaining steps for the error handlers.
 */
export function inSequence(steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      if (error) return next(error);
      if (i === steps.length) return next();
      let result: unknown;
      try {
        result = steps[i++](req, res, step);
      } catch (thrown) {
        return next(thrown);
      }
      if (result instanceof Promise) result.then(undefined, (rejection: unknown) => next(rejection ?? new Error('Rejected promise')));
    };
    step();
  };
}
