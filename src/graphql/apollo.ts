import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import type { RequestHandler } from 'express';
import { jsonBody } from '../http/json-body';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Deps } from '../core/deps';
import { createContext, type RequestContext } from '../services/context';
import type { StaffPrincipal } from '../auth/principal';
import { graphqlGate, spendStaffCost } from './gate';
import { isDomainError } from '../core/errors';
import { costError, LIMIT_CODES, limitError, limitRules, MAX_COST, MAX_TOKENS, operationCost } from './limits';
import { trustedDocumentsGate } from './trusted-documents';
import { noSandboxPage, sandboxPageSecurity } from './sandbox-page';
import { requestState, STAFF_PRINCIPAL } from '../http/request-state';

/** Support staff read; only admins run mutations. Services check roles too: this refuses early and plainly. */
const roleGate: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, contextValue }) {
        const p = contextValue.principal;
        if (operation?.operation === 'mutation' && p.kind === 'staff' && p.role !== 'admin') {
          throw new GraphQLError('Mutations need the admin role.', { extensions: { code: 'insufficient_scope', http: { status: 403 } } });
        }
      },
    };
  },
};

/**
 * Cost needs the variables, so it is measured once the operation is resolved (graphql-query-complexity), recorded on
 * the context for metrics, refused above MAX_COST before anything runs, then spent from the staff token's cost budget
 * (spendStaffCost; here, since Apollo runs plugins' didResolveOperation side by side). An operation whose cost cannot be
 * measured (variables or arguments that do not fit it, e.g. a null variable with a default in a non-null argument)
 * is refused whole with that precise error: execution would fail only the field concerned and run every other one,
 * unpriced.
 */
const costLimit = (deps: Deps): ApolloServerPlugin<RequestContext> => ({
  async requestDidStart() {
    return {
      async didResolveOperation({ document, operation, request, response, contextValue, schema }) {
        let cost: number;
        try {
          cost = operationCost(schema, document, request.variables, operation?.name?.value);
        } catch (error) {
          if (!(error instanceof GraphQLError)) throw error;
          if (error.message.startsWith('Query exceeds the maximum allowed number of nodes')) throw limitError('QUERY_TOO_COSTLY', error.message);
          // graphql-js's nested refusal kept: formatError cuts the values sent out of the message with it (withoutSentValues).
          const nested = error.originalError instanceof GraphQLError ? error.originalError : undefined;
          throw new GraphQLError(error.message, { originalError: nested, extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
        }
        contextValue.graphqlCost = cost;
        if (cost > MAX_COST) throw costError(cost);
        const p = contextValue.principal;
        if (p.kind === 'staff') await spendStaffCost(deps, p.staffId, cost, response.http.headers);
      },
    };
  },
});

/** Unexpected errors are logged here, with the request id, and masked by formatError. */
const errorLog: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        for (const error of errors) {
          const original = error.originalError;
          if (original && !isDomainError(original) && !(original instanceof GraphQLError)) {
            contextValue.logger.error({ err: original, path: error.path }, 'unexpected GraphQL error');
          }
        }
      },
    };
  },
};

/** Apollo files every validation error under GRAPHQL_VALIDATION_FAILED; a limit refusal keeps its own code. */
function limitCode(error: unknown): string | undefined {
  const original = error instanceof GraphQLError ? error.originalError : undefined;
  const code = original instanceof GraphQLError ? original.extensions.code : undefined;
  return typeof code === 'string' && (LIMIT_CODES as readonly string[]).includes(code) ? code : undefined;
}

const VARIABLE_REFUSED = /^Variable "\$[_A-Za-z][_0-9A-Za-z]*" got invalid value /;

/** graphql-js's own messages about a value, without the value: what each one says past it names only types. */
function withoutLiteral(message: string): string {
  return message
    .replace(/^Value [\s\S]* does not exist in ("[_A-Za-z][_0-9A-Za-z]*" enum\.)[\s\S]*$/, 'The value does not exist in $1')
    .replace(/^((?:Enum "[_A-Za-z][_0-9A-Za-z]*"|[_A-Za-z][_0-9A-Za-z]*) cannot represent [^:]*?value): [\s\S]*$/, '$1.')
    .replace(/^(Expected type "[_A-Za-z][_0-9A-Za-z]*"\.) [\s\S]*$/, '$1')
    .replace(/^(Expected value of type "[^"]*"), found [\s\S]*$/, '$1.')
    .replace(/^(Syntax Error: (?:Expected [\s\S]*?, found|Unexpected) (?:String|BlockString|Name|Int|Float)) [\s\S]*$/, '$1.');
}

/**
 * A request error's message without what the client sent: graphql-js quotes a variable that does not fit its type
 * whole (`Variable "$input" got invalid value { token: "…", nonce: "…" }; …`, a Play Integrity decryption key in a
 * configuration's), a literal of the wrong type, a string where a document does not parse. Errors are answers, and
 * no answer holds an attestation token, key or nonce (docs/attestation.md): values are cut, names, types and the
 * path of the refused value kept. `original`: the error graphql-js nests (the refusal of the value itself).
 */
export function withoutSentValues(message: string, original: unknown): string {
  const variable = VARIABLE_REFUSED.exec(message);
  if (!variable) return withoutLiteral(message);
  const head = variable[0].trimEnd();
  const inner = original instanceof GraphQLError ? original.message : undefined;
  if (inner === undefined || !message.endsWith(`; ${inner}`)) return `${head}.`;
  // What stands between is the value, then ` at "<path>"` when the refused value is inside the variable.
  const at = / at "[^"]*"$/.exec(message.slice(0, message.length - inner.length - 2))?.[0] ?? '';
  return `${head}${at}; ${withoutLiteral(inner)}`;
}

export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const code = limitCode(error);
  if (code) return { ...formatted, extensions: { ...formatted.extensions, code } };
  const original = (error as GraphQLError)?.originalError;
  if (isDomainError(original)) {
    return {
      message: original.message,
      path: formatted.path,
      locations: formatted.locations,
      extensions: { code: original.code, status: original.status, ...(original.errors ? { errors: original.errors } : {}) },
    };
  }
  if (original && !(original instanceof GraphQLError)) {
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'internal_error' } };
  }
  return { ...formatted, message: withoutSentValues(formatted.message, original) };
}

/**
 * /graphql: Apollo Server for staff tokens only, with Sandbox (switchable), CSRF prevention, query limits and trusted
 * documents. One operation per request (no batching), and no persisted queries registered by clients.
 */
export async function createGraphqlMiddleware(deps: Deps): Promise<{ handler: RequestHandler[]; stop: () => Promise<void> }> {
  const server = new ApolloServer<RequestContext>({
    schema: deps.schema,
    csrfPrevention: true,
    stopOnTerminationSignals: false, // src/main.ts owns shutdown: in-flight requests first, then Apollo
    introspection: deps.config.graphqlSandbox,
    includeStacktraceInErrorResponses: false,
    validationRules: limitRules,
    // Parsing is bounded before validation runs: no dashboard query comes near this many tokens.
    parseOptions: { maxTokens: MAX_TOKENS },
    // A JSON array of operations is refused (400): each operation is one request, metered and limited on its own.
    allowBatchedHttpRequests: false,
    // Apollo's automatic persisted queries would let any client register a document; the manifest answers instead.
    persistedQueries: false,
    formatError,
    plugins: [
      deps.config.graphqlSandbox ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false }) : ApolloServerPluginLandingPageDisabled(),
      roleGate,
      costLimit(deps),
      errorLog,
    ],
  });
  await server.start();
  const middleware = expressMiddleware(server, {
    context: async ({ req, res }) => {
      // Authenticated (and counted) by graphqlGate before the body was parsed.
      const principal = res.locals[STAFF_PRINCIPAL] as StaffPrincipal | undefined;
      if (!principal) {
        throw new GraphQLError('A staff token is required.', { extensions: { code: 'unauthorized', http: { status: 401 } } });
      }
      // The request id and logger the request-context middleware gave this request: both entry points log alike.
      // Kept on the request state too, where the /graphql metrics read the cost the query limits set on it.
      const state = req.res ? requestState(req.res) : undefined;
      const context = createContext(deps, principal, state?.requestId, state ? () => state.logger : undefined);
      if (state) state.ctx = context;
      return context;
    },
  });
  return {
    handler: [graphqlGate(deps), deps.config.graphqlSandbox ? sandboxPageSecurity : noSandboxPage, jsonBody(100 * 1024, { emptyIsMissing: false }), trustedDocumentsGate(deps.config.graphqlTrustedDocuments), middleware],
    stop: () => server.stop(),
  };
}
