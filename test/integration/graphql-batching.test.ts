// Protects: a page of builds with their app, scans and newest static grade, and a page of threats with their build and
// app, cost a constant number of database round trips whatever the page size (per-request DataLoaders), counted by
// the driver's own command monitoring on the MongoDB client the service uses.
import { randomBytes } from 'node:crypto';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { loadConfig } from '../../src/core/config';
import { createDeps, closeDeps } from '../../src/bootstrap';
import { ManualClock } from '../../src/core/clock';
import { createLogger } from '../../src/core/logger';
import type { Deps } from '../../src/core/deps';
import type { StaffPrincipal } from '../../src/auth/principal';
import { createApp } from '../../src/services/apps-service';
import { testBedEnv } from '../support/harness';
import { executeAs, seedBuild, seedScan, seedThreat } from '../support/staff-seed';
import { operatorContext } from '../../src/services/operator-context';

let mongo: MongoClient;
let deps: Deps;
const commands: CommandStartedEvent[] = [];
const staff: StaffPrincipal = { kind: 'staff', staffId: 'stf_batching', role: 'support' };

beforeAll(async () => {
  const bed = testBedEnv();
  mongo = new MongoClient(bed.MONGODB_URI, { monitorCommands: true });
  mongo.on('commandStarted', (event) => commands.push(event));
  await mongo.connect();
  const dbName = `t_${randomBytes(6).toString('hex')}`;
  const config = loadConfig({ MONGODB_URI: bed.MONGODB_URI, MONGODB_DATABASE: dbName, LOG_LEVEL: 'silent', DATA_DIR: `/tmp/shieldgate-test-${dbName}` });
  deps = await createDeps(config, { clock: new ManualClock(new Date()), mongo, logger: createLogger('silent') });
});

afterAll(async () => {
  await deps.db.dropDatabase().catch(() => undefined);
  await closeDeps(deps, { closeMongo: false });
  await mongo.close();
});

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));

/** An app with `n` builds (each with a preview and a static scan, half with a stored grade) and `n` threats. */
async function seedApp(n: number): Promise<string> {
  const app = await createApp(operatorContext(deps), { name: `app of ${n}`, plan: 'scale' });
  for (let i = 0; i < n; i++) {
    const build = await seedBuild(deps, app._id, { createdAt: at(i), platform: i % 2 ? 'ios' : 'android', ...(i % 2 ? { grade: 'B' } : {}) });
    await seedScan(deps, build, { engine: 'preview', grade: 'A', createdAt: at(i) });
    await seedScan(deps, build, { engine: 'static', grade: 'B', createdAt: at(i + 1) });
    await seedThreat(deps, app._id, { occurredAt: at(i), buildId: build._id });
  }
  return app._id;
}

/** The database commands one GraphQL execution sends, by name. */
async function commandsOf(source: string, variables: Record<string, unknown>): Promise<{ names: string[]; data: unknown }> {
  commands.length = 0;
  const result = await executeAs(deps, staff, source, variables);
  expect(result.errors).toBeUndefined();
  return { names: commands.map((c) => c.commandName), data: result.data };
}

const BUILDS = `query($app: ID!, $first: Int) { app(id: $app) { builds(first: $first) { nodes {
  id grade app { id name plan } scans { id engine grade } latestStaticScan { id grade score }
} } } }`;

const THREATS = `query($app: ID!, $first: Int) { app(id: $app) { threats(first: $first) { nodes {
  id detection app { id name } build { id version grade app { id } }
} } } }`;

it('reads a page of 50 builds with their app, scans and static grade in as many round trips as a page of 5', async () => {
  const small = await seedApp(5);
  const large = await seedApp(50);
  const five = await commandsOf(BUILDS, { app: small, first: 5 });
  const fifty = await commandsOf(BUILDS, { app: large, first: 50 });
  const builds = (fifty.data as { app: { builds: { nodes: Array<{ scans: unknown[]; latestStaticScan: { grade: string }; grade: string }> } } }).app.builds.nodes;
  expect(builds).toHaveLength(50);
  expect(builds.every((b) => b.scans.length === 2 && b.latestStaticScan.grade === 'B' && b.grade === 'B')).toBe(true);
  expect(fifty.names).toEqual(five.names);
  // The app, the page of builds, their apps, their scans (the newest static scan is read from the same answer).
  expect(fifty.names).toEqual(['find', 'find', 'find', 'find']);

  const threatsOfFive = await commandsOf(THREATS, { app: small, first: 5 });
  const threatsOfFifty = await commandsOf(THREATS, { app: large, first: 50 });
  const threats = (threatsOfFifty.data as { app: { threats: { nodes: Array<{ build: { app: { id: string } } }> } } }).app.threats.nodes;
  expect(threats).toHaveLength(50);
  expect(threats.every((t) => t.build.app.id === large)).toBe(true);
  expect(threatsOfFifty.names).toEqual(threatsOfFive.names);
  // The app, the page of threats, their merged occurrences, their builds, the apps of threats and builds (one batch),
  // and the static scans of the builds whose grade is not stored yet.
  expect(threatsOfFifty.names).toEqual(['find', 'find', 'find', 'find', 'find', 'find']);
});
