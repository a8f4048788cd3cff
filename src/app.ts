import express, { type Express } from 'express';
import type { Deps } from './core/deps';
import { createGraphqlMiddleware } from './graphql/apollo';
import { createRestRouter } from '../rest/router';
import { requestContext } from './http/request-context';
import { errorHandler } from '../rest/middleware/errors';
import { healthz, readyz } from './http/health';
import { requestTimeout } from './http/request-timeout';
import { accessLog } from './http/access-log';
import { graphqlMetrics, httpMetrics, metricsEndpoint } from './metrics';
import { createConsoleRouter } from './http/console';
import { inSequence } from './http/sequence';
import { landing } from './http/landing';

export interface HttpApp {
  app: Express;
  stop(): Promise<void>;
}

/** The whole HTTP surface: health, /graphql (staff), and the /v1 REST facade with its problem errors. */
export async function createHttpApp(deps: Deps): Promise<HttpApp> {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy); // who may name the client address (anonymous rate-limit buckets)
  app.set('etag', false);
  // What every request meets first, as one layer of the app's router.
  app.use(inSequence([requestTimeout(deps.config.requestTimeoutMs), requestContext(deps), accessLog(() => deps.logger), httpMetrics()]));
  app.get('/', landing(deps.config));
  app.get('/healthz', healthz);
  app.get('/readyz', readyz(deps));
  app.get('/metrics', metricsEndpoint(deps.config));
  const graphql = await createGraphqlMiddleware(deps);
  app.use('/graphql', graphqlMetrics(), ...graphql.handler);
  app.use('/console', createConsoleRouter(undefined, { explorer: deps.config.graphqlSandbox }));
  app.use(createRestRouter(deps));
  app.use(errorHandler);
  return { app, stop: graphql.stop };
}
