import fs from 'node:fs';
import YAML from 'yaml';
import { OPENAPI_FILE } from '../../src/core/paths';
import type { operations } from '../../src/generated/openapi';

export type OperationId = keyof operations;

/** What the facade needs to know of one operation, read from the OpenAPI file (the single source). */
export interface OperationInfo {
  operationId: OperationId;
  method: string; // lower case
  pathTemplate: string;
  pattern: RegExp;
  isPublic: boolean; // security: []
  statuses: Set<number>;
  acceptsIdempotencyKey: boolean;
  metered: boolean; // carries rate-limit headers
  jsonBody: boolean; // the request body, if any, is JSON (the upload's is raw bytes and must stay a stream)
  scopes: string[]; // the scopes of its security requirement: a credential must carry all of them
  appInPath: boolean; // addressed to an app by its id (`/v1/apps/{id}/...`): the credential's app must be that one
}

type SpecDoc = { paths: Record<string, Record<string, any>>; components?: any };

let cached: SpecDoc | null = null;

/** The parsed contract. Callers that mutate it (the validator) get their own copy. */
export function loadSpec(): SpecDoc {
  if (!cached) cached = YAML.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as SpecDoc;
  return cached;
}

export function specCopy(): SpecDoc {
  return structuredClone(loadSpec());
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function toPattern(template: string): RegExp {
  const escaped = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}$`);
}

function resolveParam(spec: SpecDoc, param: any): any {
  if (param?.$ref) {
    const name = String(param.$ref).split('/').pop()!;
    return spec.components?.parameters?.[name];
  }
  return param;
}

export function operationTable(): OperationInfo[] {
  const spec = loadSpec();
  const table: OperationInfo[] = [];
  for (const [pathTemplate, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolveParam(spec, p));
      const statuses = new Set(Object.keys(op.responses ?? {}).map(Number).filter(Number.isFinite));
      const success = [...statuses].find((s) => s < 300) ?? 200;
      const successResponse = op.responses?.[String(success)];
      const headers = successResponse?.headers ?? {};
      table.push({
        operationId: op.operationId,
        method,
        pathTemplate,
        pattern: toPattern(pathTemplate),
        isPublic: Array.isArray(op.security) && op.security.length === 0,
        statuses,
        acceptsIdempotencyKey: params.some((p) => p?.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'),
        metered: 'RateLimit-Limit' in headers,
        jsonBody: Boolean(op.requestBody?.content?.['application/json']),
        scopes: (op.security ?? []).flatMap((req: Record<string, string[]>) => Object.values(req).flat()),
        appInPath: pathTemplate.startsWith('/v1/apps/{id}'),
      });
    }
  }
  return table;
}

export type RouteMatch =
  | { kind: 'found'; op: OperationInfo; params: string[] }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

export function matchRoute(table: OperationInfo[], method: string, path: string): RouteMatch {
  const lower = method.toLowerCase();
  const candidates = table.filter((op) => op.pattern.test(path));
  if (candidates.length === 0) return { kind: 'not_found' };
  const op = candidates.find((c) => c.method === lower || (lower === 'head' && c.method === 'get'));
  if (!op) return { kind: 'method_not_allowed', allow: candidates.map((c) => c.method.toUpperCase()) };
  return { kind: 'found', op, params: op.pattern.exec(path)!.slice(1) };
}
