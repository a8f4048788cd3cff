// Protects: the embedded database (FerretDB on SQLite, as src/embedded starts it) serves reads, updates and upserts
// by _id from its _id index, which tools/ferretdb/build.sh makes possible by a one-line fix at build time; and what
// the fix touches still behaves: point reads, $inc by _id, upserts, deletes, and 50 concurrent $inc or upserts count
// exactly. Without the fix SQLite answers the same queries by scanning the collection (a plan of SCAN, not SEARCH).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type Collection, type Document } from 'mongodb';
import { startFerretDb, type FerretDb } from '../../src/embedded/ferretdb';

interface Counter {
  _id: string;
  n: number;
  label?: string;
}

let db: FerretDb;
let client: MongoClient;
let col: Collection<Counter>;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'shieldgate-embedded-ids-'));
  db = await startFerretDb({ dataDir });
  client = new MongoClient(db.uri);
  await client.connect();
  col = client.db('embedded_ids').collection<Counter>('counters');
  await col.insertMany(Array.from({ length: 2_000 }, (_, i) => ({ _id: `c_${String(i).padStart(6, '0')}`, n: i })));
});
afterAll(async () => {
  await client.close();
  await db.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** SQLite's plan for a find, as FerretDB's explain reports it (EXPLAIN QUERY PLAN rows). */
async function plan(filter: Document): Promise<string> {
  const explained = await client.db('embedded_ids').command({ explain: { find: 'counters', filter }, verbosity: 'queryPlanner' });
  return JSON.stringify(explained.queryPlanner);
}

it('answers a find by _id from the _id index, not by a scan', async () => {
  const byId = await plan({ _id: 'c_001234' });
  expect(byId).toMatch(/SEARCH[^"]*USING INDEX/);
  expect(byId).not.toMatch(/"SCAN /);
  // Any other filter is not pushed down: a scan, as before (why repositories read threats by _id alone).
  expect(await plan({ n: 5 })).toMatch(/SCAN/);
});

it('reads documents by _id, and nothing for an id that does not exist', async () => {
  expect(await col.findOne({ _id: 'c_000000' })).toEqual({ _id: 'c_000000', n: 0 });
  expect(await col.findOne({ _id: 'c_001999' })).toEqual({ _id: 'c_001999', n: 1999 });
  expect(await col.findOne({ _id: 'c_002000' })).toBeNull();
  expect(await col.find({ _id: 'c_000042' }).toArray()).toEqual([{ _id: 'c_000042', n: 42 }]);
});

it('applies $inc and $set by _id to that document only', async () => {
  const result = await col.updateOne({ _id: 'c_000007' }, { $inc: { n: 10 }, $set: { label: 'seven' } });
  expect(result.matchedCount).toBe(1);
  expect(await col.findOne({ _id: 'c_000007' })).toEqual({ _id: 'c_000007', n: 17, label: 'seven' });
  expect(await col.findOne({ _id: 'c_000008' })).toEqual({ _id: 'c_000008', n: 8 });
  expect((await col.updateOne({ _id: 'c_missing' }, { $inc: { n: 1 } })).matchedCount).toBe(0);
});

it('counts 50 concurrent $inc of one document exactly', async () => {
  await Promise.all(Array.from({ length: 50 }, () => col.updateOne({ _id: 'c_000100' }, { $inc: { n: 1 } })));
  expect((await col.findOne({ _id: 'c_000100' }))?.n).toBe(150);
});

it('creates one document from 50 concurrent upserts of one _id, and counts each of them', async () => {
  await Promise.all(Array.from({ length: 50 }, () => col.updateOne({ _id: 'c_upserted' }, { $inc: { n: 1 } }, { upsert: true })));
  expect(await col.find({ _id: 'c_upserted' }).toArray()).toEqual([{ _id: 'c_upserted', n: 50 }]);
});

it('refuses a second insert of an _id and deletes by _id', async () => {
  await expect(col.insertOne({ _id: 'c_000003', n: 0 })).rejects.toMatchObject({ code: 11000 });
  expect((await col.deleteOne({ _id: 'c_000003' })).deletedCount).toBe(1);
  expect(await col.findOne({ _id: 'c_000003' })).toBeNull();
  expect(await col.findOne({ _id: 'c_000004' })).toEqual({ _id: 'c_000004', n: 4 });
});
