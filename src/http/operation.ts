import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { REPO_ROOT } from '../core/paths';
import { STAFF_PRINCIPAL, type RequestState } from './request-state';

/** Which surface a request was for: a label with a fixed set of values. */
export type Api = 'v1' | 'graphql' | 'health' | 'metrics' | 'console' | 'other';

export function apiOf(path: string): Api {
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  if (path === '/graphql' || path.startsWith('/graphql/') || path.startsWith('/graphql?')) return 'graphql';
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path === '/metrics') return 'metrics';
  if (path === '/console' || path.startsWith('/console/')) return 'console';
  return 'other';
}

/** A GraphQL Name (spec §2.1.9), kept short: anything else a client sends as a name is not one. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/** Distinct unregistered operation names given their own series before the rest share `other`. */
export const MAX_FREE_NAMES = 50;

const TRUSTED_DOCUMENTS = path.join(REPO_ROOT, 'src', 'generated', 'trusted-documents.json');

/** Operation names of the registered (trusted) documents: always labelled by name. Read once, if the manifest exists. */
function registeredNames(): Set<string> {
  const names = new Set<string>();
  try {
    const manifest = JSON.parse(fs.readFileSync(TRUSTED_DOCUMENTS, 'utf8')) as Record<string, unknown>;
    for (const text of Object.values(manifest)) {
      if (typeof text !== 'string') continue;
      for (const match of text.matchAll(/\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/g)) names.add(match[1]);
    }
  } catch {
    // No manifest (yet): every name is a free one.
  }
  return names;
}

/*
 * Process-wide by design, not instance state: these bound the label values of the one metrics registry of the process
 * (src/metrics/registry.ts), which every instance in the process writes to and /metrics serves whole. Kept per
 * instance, N instances in one process would admit N × MAX_FREE_NAMES names into that registry. `registered` is the
 * trusted-document manifest shipped with the code, read once and never changed.
 */
let registered: Set<string> | null = null;
const freeNames = new Set<string>();

/**
 * The label of a GraphQL operation name. Names of registered documents are kept; other valid names are kept until
 * MAX_FREE_NAMES distinct ones have been seen, then share `other` (staff can type any name in the Sandbox: without this
 * bound, a script naming each query differently would grow the series without end). No name: `anonymous`.
 */
export function graphqlOperationLabel(name: unknown): string {
  if (name === undefined || name === null || name === '') return 'anonymous';
  if (typeof name !== 'string' || !GRAPHQL_NAME.test(name)) return 'other';
  registered ??= registeredNames();
  if (registered.has(name) || freeNames.has(name)) return name;
  if (freeNames.size >= MAX_FREE_NAMES) return 'other';
  freeNames.add(name);
  return name;
}

/** The operation name a /graphql request carries (POST body or GET query), unvalidated. */
function graphqlOperationName(req: Request): unknown {
  const body = req.body as { operationName?: unknown } | undefined;
  if (body && typeof body === 'object' && 'operationName' in body) return body.operationName;
  return typeof req.query?.operationName === 'string' ? req.query.operationName : undefined;
}

/**
 * The label of a /graphql request's operation. Only a staff member's request names it: a request refused before
 * its body was read, or sent without a token (a GET reaches Apollo, which refuses it), is `unknown`, so nobody
 * without a token chooses label values or uses up the free names staff's own operations need.
 */
export function graphqlOperationOf(req: Request, res: Response): string {
  if (!('body' in req) || !res.locals[STAFF_PRINCIPAL]) return 'unknown';
  return graphqlOperationLabel(graphqlOperationName(req));
}

export interface OperationOf {
  api: Api;
  /** The OpenAPI operationId, the GraphQL operation label, or a fixed name; `unmatched` when no route matched. */
  operation: string;
  /** The route's template, never the requested URL (that may carry an upload token or a query string). */
  route: string;
}

/** What a request was, for labels and the access log: read when it ends, once routing and body parsing have run. */
export function operationOf(req: Request, res: Response): OperationOf {
  const path = req.originalUrl.split('?', 1)[0];
  const api = apiOf(path);
  switch (api) {
    case 'v1': {
      const op = (res.locals.shieldgate as RequestState | undefined)?.op;
      return op ? { api, operation: op.operationId, route: op.pathTemplate } : { api, operation: 'unmatched', route: 'unmatched' };
    }
    case 'graphql':
      return { api, operation: graphqlOperationOf(req, res), route: '/graphql' };
    case 'health':
    case 'metrics':
      return { api, operation: path.slice(1), route: path };
    case 'console':
      return { api, operation: 'console', route: '/console' };
    default:
      return { api, operation: 'unmatched', route: 'unmatched' };
  }
}
