import type { RequestHandler } from 'express';
import type { Config } from '../core/config';

/**
 * GET /: where to go from the service's root, instead of a 404 problem: the staff console, the staff GraphQL API
 * (with Apollo Sandbox when GRAPHQL_SANDBOX is on), the REST contract and the health routes.
 */
export function landing(config: Config): RequestHandler {
  const base = config.publicBaseUrl;
  const body = JSON.stringify({
    service: 'shieldgate',
    links: {
      console: `${base}/console`,
      graphql: `${base}/graphql`,
      openapi: `${base}/v1/openapi.json`,
      health: `${base}/healthz`,
    },
    sandbox: config.graphqlSandbox ? 'Apollo Sandbox at /graphql in a browser; give it a staff token in its connection settings (Authorization header)' : null,
  });
  return (_req, res) => {
    res.status(200).type('application/json').setHeader('cache-control', 'no-store');
    res.send(body);
  };
}
