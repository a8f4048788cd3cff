// Protects: the first signing key of a fresh database. Two instances starting at once, each with requests that
// need a signature, must all succeed: before, each created a key and retired every other one, and could leave
// none active ("no active signing key after rotation", a 500 on a fresh deployment).
import { randomBytes } from 'node:crypto';
import { startHarness, type Harness } from '../support/harness';
import { loadConfig } from '../../src/core/config';
import { createDeps, closeDeps } from '../../src/bootstrap';
import type { Deps } from '../../src/core/deps';
import { createLogger } from '../../src/core/logger';
import { SigningKeysRepo } from '../../src/data/signing-keys-repo';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

async function instanceOn(database: string): Promise<Deps> {
  const config = loadConfig({ MONGODB_URI: h.config.mongodbUri!, MONGODB_DATABASE: database, DATA_DIR: h.config.dataDir });
  return createDeps(config, { mongo: h.deps.mongo, logger: createLogger('silent') });
}

it('signs from two instances at once on a database without a key, and each verifies the other', async () => {
  const database = `sk_first_${randomBytes(4).toString('hex')}`;
  const [a, b] = await Promise.all([instanceOn(database), instanceOn(database)]);
  try {
    const expiresAt = new Date(Date.now() + 60_000);
    const sign = (deps: Deps, i: number) => deps.signingKeys.sign('access', { sub: `t${i}` }, expiresAt);
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => sign(i % 2 ? a : b, i)));
    expect(tokens).toHaveLength(40);
    for (const [i, token] of tokens.entries()) {
      const verifier = i % 2 ? b : a; // the instance that did not sign it
      expect((await verifier.signingKeys.verify('access', token))?.claims.sub).toBe(`t${i}`);
    }
    const active = await h.deps.mongo.db(database).collection(SigningKeysRepo.collectionName).countDocuments({ status: 'active' });
    expect(active).toBeGreaterThanOrEqual(1);
    expect(active).toBeLessThanOrEqual(2); // at most one first key per instance
  } finally {
    await Promise.all([closeDeps(a, { closeMongo: false }), closeDeps(b, { closeMongo: false })]);
    await h.deps.mongo.db(database).dropDatabase();
  }
});

it('a rotation after two first keys leaves exactly one active', async () => {
  const database = `sk_rotate_${randomBytes(4).toString('hex')}`;
  const [a, b] = await Promise.all([instanceOn(database), instanceOn(database)]);
  try {
    const expiresAt = new Date(Date.now() + 60_000);
    await Promise.all([a.signingKeys.sign('access', {}, expiresAt), b.signingKeys.sign('access', {}, expiresAt)]);
    const { kid } = await a.signingKeys.rotate({ revokePrevious: false });
    const active = await h.deps.mongo.db(database).collection(SigningKeysRepo.collectionName).find({ status: 'active' }).toArray();
    expect(active.map((d) => d._id)).toEqual([kid]);
  } finally {
    await Promise.all([closeDeps(a, { closeMongo: false }), closeDeps(b, { closeMongo: false })]);
    await h.deps.mongo.db(database).dropDatabase();
  }
});
