/** Helpers for the security-event tests: event factory, ingest and list calls, a second instance on one database. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { createHttpApp } from '../../src/app';
import { createLogger } from '../../src/core/logger';
import { mintAccessToken } from '../../src/auth/access-tokens';
import type { Scope } from '../../src/auth/scopes';
import { bearer, json, readJson, type Harness } from '../support/harness';

export const DEVICE = 'device-0001-5f3a9c';

export function event(at: Date, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    detection: 'hooking',
    verdict: 'compromised',
    confidence: 0.8,
    action: 'block',
    signals: ['frida_server', 'suspicious_library'],
    platform: 'android',
    appVersion: '2.4.1',
    occurredAt: at.toISOString(),
    deviceId: DEVICE,
    ...overrides,
  };
}

export const minutes = (n: number) => n * 60_000;
export const after = (base: Date, ms: number) => new Date(base.getTime() + ms);

export async function ingest(baseUrl: string, key: string, events: unknown[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/v1/events`, { method: 'POST', headers: json(key), body: JSON.stringify({ events }) });
  return { status: res.status, body: await readJson(res) };
}

export async function list(h: Harness, key: string, appId: string, query: Record<string, string | number> = {}): Promise<{ status: number; body: any }> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await h.api(`/v1/apps/${appId}/threats${qs ? `?${qs}` : ''}`, { headers: bearer(key) });
  return { status: res.status, body: await readJson(res) };
}

/** Every threat of an app, following cursors. */
export async function listAll(h: Harness, key: string, appId: string, query: Record<string, string | number> = {}): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: any } = await list(h, key, appId, { ...query, limit: 100, ...(cursor ? { cursor } : {}) });
    expect(page.status).toBe(200);
    all.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return all;
}

export async function gql(h: Harness, token: string, query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await h.api('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await readJson(res) };
}

/** A second service instance over the same database (same secrets, same clock): what a load balancer spreads over. */
export async function startSecondInstance(h: Harness): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const deps = await createDeps(h.config, { clock: h.clock, mongo: h.deps.mongo, logger: createLogger(h.config.logLevel) });
  const { app, stop } = await createHttpApp(deps);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stop();
      await closeDeps(deps, { closeMongo: false });
    },
  };
}

/** An access token of the app (as the OIDC exchange would mint it), from a trust rule inserted directly. */
export async function accessToken(h: Harness, appId: string, scopes: Scope[]): Promise<string> {
  const app = await h.deps.repos.apps.findById(appId);
  const rule = await h.deps.repos.oidcRules.insertIfRoom({
    _id: `rul_${Math.random().toString(36).slice(2, 12)}`,
    appId,
    subjectPattern: 'repo:acme/mobile:ref:refs/heads/main',
    workflowRef: null,
    environment: null,
    scopes,
    repositoryId: null,
    repositoryOwnerId: null,
    createdAt: h.clock.now(),
  });
  return (await mintAccessToken(h.deps, app!, [rule!], 'repo:acme/mobile:ref:refs/heads/main')).token;
}
