import type { Request } from 'express';

/** Path parameters of the matched contract operation (set by the validator's route match). */
export function pathParams(req: Request): Record<string, string> {
  const openapi = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi;
  return openapi?.pathParams ?? (req.params as Record<string, string>) ?? {};
}
