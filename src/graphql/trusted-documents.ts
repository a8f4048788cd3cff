import type { Request, RequestHandler, Response } from 'express';
import manifest from '../generated/trusted-documents.json';
import { STAFF_PRINCIPAL } from '../http/request-state';
import type { StaffPrincipal } from '../auth/principal';
import { documentHash, TRUSTED_ID_PREFIX } from './document-hash';

/** The registered documents: console/operations/*.graphql, compiled by `npm run codegen`. Requests register none. */
const registered: Readonly<Record<string, string>> = manifest;

export function trustedDocument(sha256Hex: string): string | undefined {
  const id = TRUSTED_ID_PREFIX + sha256Hex;
  return Object.hasOwn(registered, id) ? registered[id] : undefined;
}

class Refusal {
  constructor(readonly status: number, readonly code: string, readonly message: string) {}
}

/** An operation's `query` and `extensions` as the client sent them, wherever they travel (POST body or GET URL). */
interface Operation {
  query: unknown;
  extensions: unknown;
}

/**
 * Resolves a persisted query against the manifest and applies the trusted-documents rule; returns the text to run
 * (or the request's own, unchanged, when it carries no persisted query and needs no check).
 */
function resolve(op: Operation, enforce: boolean, principal: StaffPrincipal | undefined): string | undefined {
  let query = typeof op.query === 'string' ? op.query : undefined;
  const persisted = (op.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  if (persisted !== undefined) {
    const hash = persisted?.sha256Hash;
    if (persisted?.version !== 1 || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
      throw new Refusal(400, 'PERSISTED_QUERY_INVALID', 'extensions.persistedQuery must be { "version": 1, "sha256Hash": "<64 lowercase hex digits>" }.');
    }
    if (query === undefined) {
      query = trustedDocument(hash);
      if (query === undefined) {
        throw new Refusal(400, 'PERSISTED_QUERY_NOT_FOUND', `No registered document has the hash ${hash}; documents are registered when the service is built, never by requests.`);
      }
    } else if (documentHash(query) !== hash) {
      throw new Refusal(400, 'PERSISTED_QUERY_HASH_MISMATCH', 'extensions.persistedQuery.sha256Hash is not the SHA-256 of query.');
    }
  }
  const admin = principal?.role === 'admin';
  if (enforce && principal && !admin && query !== undefined && trustedDocument(documentHash(query)) === undefined) {
    throw new Refusal(403, 'TRUSTED_DOCUMENT_REQUIRED', 'Only registered documents run here (GRAPHQL_TRUSTED_DOCUMENTS=on): send a registered document or its persistedQuery hash.');
  }
  return query;
}

function withoutPersistedQuery(extensions: unknown): Record<string, unknown> | undefined {
  if (!extensions || typeof extensions !== 'object') return undefined;
  const { persistedQuery: _answered, ...rest } = extensions as Record<string, unknown>;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** GET /graphql?query=...&extensions=...: the same rule; a resolved persisted query is put into the URL. */
function resolveGet(req: Request, enforce: boolean, principal: StaffPrincipal | undefined): void {
  const url = new URL(req.url, 'http://graphql.invalid');
  const rawExtensions = url.searchParams.get('extensions');
  let extensions: unknown;
  try {
    extensions = rawExtensions === null ? undefined : JSON.parse(rawExtensions);
  } catch {
    return; // Apollo refuses extensions that are not JSON with its own error
  }
  const query = resolve({ query: url.searchParams.get('query') ?? undefined, extensions }, enforce, principal);
  if ((extensions as { persistedQuery?: unknown } | undefined)?.persistedQuery === undefined || query === undefined) return;
  url.searchParams.set('query', query);
  const rest = withoutPersistedQuery(extensions);
  if (rest) url.searchParams.set('extensions', JSON.stringify(rest));
  else url.searchParams.delete('extensions');
  req.url = `${url.pathname}${url.search}`;
}

function refuse(res: Response, refusal: Refusal): void {
  res.status(refusal.status).json({ errors: [{ message: refusal.message, extensions: { code: refusal.code } }] });
}

/**
 * /graphql after authentication and body parsing, before Apollo. Persisted queries are answered from the manifest
 * (`extensions.persistedQuery.sha256Hash` without `query` runs the registered document of that hash) and never
 * registered by a request: Apollo's own APQ cache is off. With `enforce` (GRAPHQL_TRUSTED_DOCUMENTS=on), staff other
 * than admins run registered documents only, sent by hash or as their exact text; admins keep free text (Sandbox).
 * A batch (JSON array) is left to Apollo, which refuses it.
 */
export function trustedDocumentsGate(enforce: boolean): RequestHandler {
  return (req, res, next) => {
    const principal = res.locals[STAFF_PRINCIPAL] as StaffPrincipal | undefined;
    try {
      if (req.method === 'GET' || req.method === 'HEAD') {
        resolveGet(req, enforce, principal);
      } else if (req.body && typeof req.body === 'object' && !Array.isArray(req.body)) {
        const body = req.body as Operation & Record<string, unknown>;
        const query = resolve(body, enforce, principal);
        if ((body.extensions as { persistedQuery?: unknown } | null | undefined)?.persistedQuery !== undefined) {
          const { extensions: _sent, ...rest } = body;
          const extensions = withoutPersistedQuery(body.extensions);
          req.body = { ...rest, query, ...(extensions ? { extensions } : {}) };
        }
      }
      next();
    } catch (error) {
      if (error instanceof Refusal) return refuse(res, error);
      next(error);
    }
  };
}
