import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics, served at /metrics (src/metrics/endpoint.ts). One registry per process: Prometheus scrapes
 * instances, so every number here is this instance's. Labels take values from fixed sets only (operation ids, bucketed
 * GraphQL operation names, status codes, outcomes, command names): never an id, a path or anything a client chose
 * freely, so the number of series stays bounded whatever traffic arrives.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'shieldgate_' });

/** Seconds; long enough at the top for a 500 MB upload on a slow CI link. */
const REQUEST_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export const metrics = {
  httpRequests: new Counter({
    name: 'shieldgate_http_requests_total',
    help: 'HTTP requests by API (v1, graphql, health, metrics, console, other), operation and status code ("aborted": the client closed the connection before the response was finished).',
    labelNames: ['api', 'operation', 'status'] as const,
    registers: [registry],
  }),
  httpDuration: new Histogram({
    name: 'shieldgate_http_request_duration_seconds',
    help: 'Time from the request arriving to its response finished (or the client gone), by API, operation and status.',
    labelNames: ['api', 'operation', 'status'] as const,
    buckets: REQUEST_SECONDS,
    registers: [registry],
  }),
  graphqlOperations: new Counter({
    name: 'shieldgate_graphql_operations_total',
    help: 'GraphQL operations run at /graphql, by operation name (bucketed) and outcome: ok, error (errors in a 200 answer), invalid (refused before execution: parse, validation, limits), refused (401/403), failed (5xx), aborted.',
    labelNames: ['operation', 'outcome'] as const,
    registers: [registry],
  }),
  graphqlCost: new Histogram({
    name: 'shieldgate_graphql_operation_cost',
    help: 'Computed cost of GraphQL operations (the query-limit estimate), by operation name (bucketed).',
    labelNames: ['operation'] as const,
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [registry],
  }),
  rateLimitRefusals: new Counter({
    name: 'shieldgate_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, by bucket kind: key (API key), rule (OIDC trust rule), ip (anonymous /v1), gql-staff, gql-cost (a staff token query cost budget), gql-ip.',
    labelNames: ['bucket'] as const,
    registers: [registry],
  }),
  uploadsInFlight: new Gauge({
    name: 'shieldgate_uploads_in_flight',
    help: 'Package uploads streaming into the artifact store on this instance now.',
    registers: [registry],
  }),
  uploadBytes: new Counter({
    name: 'shieldgate_upload_bytes_received_total',
    help: 'Bytes of package uploads received (counted as they stream, refused bodies included).',
    registers: [registry],
  }),
  uploads: new Counter({
    name: 'shieldgate_uploads_total',
    help: 'Package upload bodies by outcome: stored, too_large, mismatch, client_gone, lock_lost, stalled, store_error.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  scanJobs: new Counter({
    name: 'shieldgate_scan_jobs_total',
    help: 'Static scan job attempts by outcome: done, retry (failed, to be retried), failed (given up: an incomplete scan was written).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  scanJobDuration: new Histogram({
    name: 'shieldgate_scan_job_duration_seconds',
    help: 'Wall-clock time of static scan job attempts, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  }),
  dbCommandDuration: new Histogram({
    name: 'shieldgate_db_command_duration_seconds',
    help: 'MongoDB command latency as the driver measured it, by command name (find, insert, aggregate, ...) and outcome (ok, failed).',
    labelNames: ['command', 'outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  }),
  webhookDeliveries: new Counter({
    name: 'shieldgate_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, to be retried), given_up, dropped (webhook deleted).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  attestVerdicts: new Counter({
    name: 'shieldgate_attest_verdicts_total',
    help: 'Attestation verdicts of apps that configured a real engine, by engine (app_attest, play_integrity, key_attestation), verdict, and the first reason (none when trusted): fixed vocabularies only, never a token or a key id.',
    labelNames: ['engine', 'verdict', 'reason'] as const,
    registers: [registry],
  }),
  webhookPendingDropped: new Counter({
    name: 'shieldgate_webhook_pending_dropped_total',
    help: 'Pending webhook deliveries dropped unsent, the oldest first, because their app had more than WEBHOOK_MAX_PENDING_PER_APP queued.',
    registers: [registry],
  }),
};
