export { registry, metrics } from './registry';
export { httpMetrics } from './http';
export { graphqlMetrics } from './graphql';
export { metricsEndpoint } from './endpoint';
export { observeMongoCommands } from './mongo';
export { operationOf } from '../http/operation';
export { onRequestEnd } from './request-end';
