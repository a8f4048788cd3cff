/**
 * The soak's tenants: three apps, each with a CI key, a device key and a reader key (made by the services, as the
 * operator CLI makes them), a staff token for the dashboards, and webhooks pointing at local receivers: every app
 * has one that answers at once, the second app one that answers 200 after 3 s, the third one that always fails.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/core/config';
import { closeDeps, createDeps } from '../../src/bootstrap';
import { createLogger } from '../../src/core/logger';
import { createApp } from '../../src/services/apps-service';
import { createApiKey, createStaff } from '../../src/services/keys-service';
import { operatorContext } from '../../src/services/operator-context';
import type { Scope } from '../../src/auth/scopes';
import type { Balancer } from './balancer';
import type { Ledger } from './ledger';

export type ReceiverKind = 'prompt' | 'slow' | 'failing';

export interface Tenant {
  appId: string;
  ciKey: string;
  deviceKey: string;
  readerKey: string;
  /** webhook id -> how its receiver answers */
  webhooks: Map<string, ReceiverKind>;
}

export interface Tenants {
  apps: Tenant[];
  staffToken: string;
  receivers: http.Server;
}

/** How long the slow receiver waits before its 200: slow, but under the delivery breaker's 5 s. */
const SLOW_MS = 3_000;

export async function setUpTenants(env: Record<string, string>, balancer: Balancer, ledger: Ledger): Promise<Tenants> {
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const ctx = operatorContext(deps);
  const key = async (appId: string, scopes: Scope[]) => (await createApiKey(ctx, { appId, scopes, mode: 'live' })).key;
  const apps: Tenant[] = [];
  let staffToken: string;
  try {
    for (let i = 0; i < 3; i++) {
      const appId = (await createApp(ctx, { name: `soak tenant ${i + 1}`, plan: 'enterprise' }))._id;
      apps.push({
        appId,
        ciKey: await key(appId, ['builds:write', 'builds:read', 'scans:read']),
        deviceKey: await key(appId, ['events:ingest']),
        readerKey: await key(appId, ['threats:read', 'rules:read', 'rules:write']),
        webhooks: new Map(),
      });
    }
    staffToken = (await createStaff(ctx, 'support')).token;
  } finally {
    await closeDeps(deps);
  }

  const routes = new Map<string, { webhookId: string; kind: ReceiverKind }>();
  const receivers = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const route = routes.get(req.url ?? '');
      const id = req.headers['webhook-id'];
      if (route && typeof id === 'string') ledger.receive(route.webhookId, id);
      if (route?.kind === 'failing') return res.writeHead(500).end('receiver down');
      if (route?.kind === 'slow') return void setTimeout(() => res.writeHead(200).end('ok'), SLOW_MS);
      res.writeHead(route ? 200 : 404).end();
    });
  });
  receivers.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => receivers.listen(0, '127.0.0.1', resolve));
  const port = (receivers.address() as AddressInfo).port;

  const kinds: ReceiverKind[][] = [['prompt'], ['prompt', 'slow'], ['prompt', 'failing']];
  for (const [i, tenant] of apps.entries()) {
    for (const kind of kinds[i]) {
      const path = `/hook/${i}/${kind}`;
      const res = await balancer.call('createWebhook', `/v1/apps/${tenant.appId}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.readerKey}`, 'content-type': 'application/json' },
        // gradeBelow A: every static scan graded below A is announced, so the reckoning knows which scans owe one.
        body: JSON.stringify({ url: `http://127.0.0.1:${port}${path}`, events: ['scan.completed', 'threat.opened'], gradeBelow: 'A' }),
      });
      if (res?.status !== 201) throw new Error(`creating a webhook: ${res?.status} ${res?.text}`);
      const webhookId = res.json().id as string;
      tenant.webhooks.set(webhookId, kind);
      routes.set(path, { webhookId, kind });
    }
  }
  return { apps, staffToken, receivers };
}
