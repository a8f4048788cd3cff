// Protects: the embedded database's pushdown (tools/ferretdb/patches) never changes an answer. The same documents and
// the same finds go to FerretDB built with the patches (.cache/bin/ferretdb, what `npm start` and every test run) and
// without them (.cache/bin/ferretdb-reference), which must return the same documents, with the same BSON types, in
// the same order. The finds are every query shape the repositories send (read from src/data by
// test/support/query-shapes.ts) with random values, plus random filters; the documents hold every type the pushdown
// must not misjudge (test/support/pushdown-cases.ts). The run is seeded and prints its seed: PUSHDOWN_SEED=<n>
// repeats one, PUSHDOWN_SCALE=<k> multiplies the number of cases.
//
// It also lists the SQLite plan of every repository query on the patched build (an index search, never a scan of the
// collection), and opens files written by the unpatched build with the patched one and back.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Collection, type Document } from 'mongodb';
import { startFerretDb, type FerretDb } from '../../src/embedded/ferretdb';
import { REPO_ROOT } from '../../src/core/paths';
import { extractRepository, type DeclaredIndex, type QueryShape } from '../support/query-shapes';
import { mulberry32 } from '../support/prng';
import { CaseMaker, GENERIC_FIELDS, GENERIC_INDEXES, canonical, type FindCase, type Mode } from '../support/pushdown-cases';

const SEED = Number(process.env.PUSHDOWN_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SCALE = Number(process.env.PUSHDOWN_SCALE ?? 1);
const DOCS = 200;
const BIN = path.join(REPO_ROOT, '.cache', 'bin');

/** The documents here have string ids (as the service's do). */
type Doc = { _id: string } & Document;

interface Server {
  db: FerretDb;
  client: MongoClient;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'pushdown-'));
let patched: Server;
let reference: Server;
let referenceBuild: string;
// PUSHDOWN_PATCHED_BIN runs the cases against another build, e.g. one with a pushdown broken on purpose, to see them fail.
const PATCHED_BUILD = process.env.PUSHDOWN_PATCHED_BIN ?? path.join(BIN, 'ferretdb');

async function open(binary: string, dataDir: string): Promise<Server> {
  const db = await startFerretDb({ binary, dataDir });
  const client = new MongoClient(db.uri, { serverSelectionTimeoutMS: 20_000 });
  await client.connect();
  return { db, client };
}

async function close(server: Server | undefined): Promise<void> {
  await server?.client.close().catch(() => undefined);
  await server?.db.stop();
}

interface Repository {
  file: string;
  indexes: DeclaredIndex[];
  queries: QueryShape[];
  fields: string[];
}

const REPOSITORIES: Repository[] = readdirSync(path.join(REPO_ROOT, 'src', 'data'))
  .filter((f) => f.endsWith('-repo.ts'))
  .map((file) => {
    const { indexes, queries } = extractRepository(path.join(REPO_ROOT, 'src', 'data', file));
    const fields = new Set<string>();
    for (const index of indexes) for (const [field] of index.keys) fields.add(field);
    for (const q of queries) for (const field of [...q.equality, ...q.range, ...q.other, ...q.sort.map(([f]) => f)]) fields.add(field);
    return { file, indexes, queries, fields: [...fields].filter((f) => !f.startsWith('$')).sort() };
  })
  .filter((r) => r.queries.length > 0);

const indexSpecs = (indexes: DeclaredIndex[]) => indexes.map((i) => ({ key: Object.fromEntries(i.keys), name: i.name }));

async function load(name: string, indexes: DeclaredIndex[], docs: Document[]): Promise<Array<Collection<Doc>>> {
  return Promise.all(
    [reference, patched].map(async (server) => {
      const col = server.client.db('pushdown').collection<Doc>(name);
      if (indexes.length) await col.createIndexes(indexSpecs(indexes));
      // insertMany sets nothing on documents that have an _id; each server gets its own copy all the same.
      await col.insertMany(docs.map((d) => ({ ...d }) as Doc));
      return col;
    }),
  );
}

type Answer = { docs: string[] } | { error: string };

async function answer(col: Collection<Doc>, c: FindCase): Promise<Answer> {
  let cursor = col.find(c.filter);
  if (c.sort) cursor = cursor.sort(c.sort);
  if (c.skip) cursor = cursor.skip(c.skip);
  if (c.limit) cursor = cursor.limit(c.limit);
  try {
    const docs = (await cursor.toArray()).map(canonical);
    // Without a sort, MongoDB promises no order: compared as sets.
    return { docs: c.sort ? docs : docs.sort() };
  } catch (e) {
    return { error: (e as { codeName?: string }).codeName ?? (e as Error).message };
  }
}

interface Tally {
  cases: number;
  nonEmpty: number;
  errors: number;
  mismatches: string[];
}
const tally: Tally = { cases: 0, nonEmpty: 0, errors: 0, mismatches: [] };

async function compare(where: string, cols: Collection<Doc>[], c: FindCase): Promise<void> {
  const [want, got] = await Promise.all(cols.map((col) => answer(col, c)));
  tally.cases++;
  if ('docs' in want && want.docs.length) tally.nonEmpty++;
  if ('error' in want) tally.errors++;
  if (JSON.stringify(want) !== JSON.stringify(got) && tally.mismatches.length < 5) {
    const shown = (a: Answer) => ('error' in a ? a.error : `${a.docs.length} documents: ${a.docs.join(' ').slice(0, 1500)}`);
    tally.mismatches.push(`${where}: ${canonical(c as unknown as Document)}\n  reference: ${shown(want)}\n  patched:   ${shown(got)}`);
  }
}

/** Whether the patched build walks the `t` index in order for a page sorted by it (patch 03's explain flag). */
async function sortPushedDown(collection: string): Promise<boolean> {
  const plan = await patched.client.db('pushdown').command({ explain: { find: collection, filter: { g: 's1' }, sort: { t: -1, _id: -1 }, limit: 5 } });
  return plan.sortPushdown === true;
}

/**
 * The unpatched build, made by tools/install.sh (idempotent: it rebuilds what is missing or older than tools/ferretdb).
 * A checkout set up before the patches existed has the patched build (src/embedded/ferretdb.ts rebuilds it) but not this one.
 */
function referenceBinary(): string {
  const install = spawnSync('bash', [path.join(REPO_ROOT, 'tools', 'install.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const binary = path.join(BIN, 'ferretdb-reference');
  if (install.status !== 0 || !existsSync(binary)) throw new Error('tools/install.sh did not produce .cache/bin/ferretdb-reference');
  return binary;
}

beforeAll(async () => {
  referenceBuild = referenceBinary();
  [reference, patched] = await Promise.all([
    open(referenceBuild, path.join(work, 'reference')),
    open(PATCHED_BUILD, path.join(work, 'patched')),
  ]);
  console.log(`pushdown differential: seed ${SEED} (PUSHDOWN_SEED=${SEED} repeats it), scale ${SCALE}`);
}, 600_000); // a cold Go cache builds the reference in minutes

afterAll(async () => {
  await close(patched);
  await close(reference);
  rmSync(work, { recursive: true, force: true });
});

describe('the patched FerretDB answers every find as the unpatched one does', () => {
  it('every query shape of every repository, on clean and on mixed-type documents', async () => {
    const make = new CaseMaker(mulberry32(SEED));
    for (const repo of REPOSITORIES) {
      for (const mode of ['clean', 'mixed'] as Mode[]) {
        const docs = Array.from({ length: DOCS }, (_, i) => make.document(i, repo.fields, mode));
        const cols = await load(`${repo.file.replace(/-repo\.ts$/, '')}_${mode}`, repo.indexes, docs);
        const ids = docs.map((d) => d._id as string);
        // The first sorted find starts the patched build's check of a date field's values (patch 03); cases run
        // while it goes on and after it.
        for (const shape of repo.queries) {
          for (let i = 0; i < 6 * SCALE; i++) await compare(`${repo.file} ${shape.method} (${mode})`, cols, make.forShape(shape, ids));
        }
      }
    }
    console.log(`pushdown differential, repository shapes: ${tally.cases} finds over ${REPOSITORIES.length} repositories, ${tally.nonEmpty} non-empty, ${tally.errors} refused alike`);
    expect(tally.mismatches).toEqual([]);
    expect(tally.nonEmpty).toBeGreaterThan(tally.cases / 5);
  }, 600_000);

  it('random filters, sorts and limits, while a field that held only dates gets other values', async () => {
    const make = new CaseMaker(mulberry32(SEED + 1));
    const before = tally.cases;
    const collections: Record<string, Collection<Doc>[]> = {};
    let id = 0;
    for (const mode of ['clean', 'mixed', 'sneaky', 'clean2'] as const) {
      const docs = Array.from({ length: 400 }, () => make.document(id++, GENERIC_FIELDS, mode === 'clean2' ? 'clean' : mode));
      collections[mode] = await load(`generic_${mode}`, GENERIC_INDEXES, docs);
    }
    const ids = Array.from({ length: id }, (_, i) => `d${String(i).padStart(5, '0')}`);
    const run = async (name: string, count: number) => {
      for (let k = 0; k < count; k++) await compare(`generic ${name}`, collections[name], make.generic(ids));
    };
    for (const name of Object.keys(collections)) await run(name, 100 * SCALE);
    expect(await sortPushedDown('generic_clean')).toBe(true);
    expect(await sortPushedDown('generic_mixed')).toBe(false);
    // A date field's index order is trusted only while it holds nothing else: one update and one insert end that.
    await Promise.all(collections.clean.map((col) => col.updateOne({ _id: 'd00007' }, { $set: { t: 1577836800000 } })));
    await Promise.all(collections.clean2.map((col) => col.insertOne({ _id: 'zz1', g: 's1', t: new Date(10413792000000), a: 'x' })));
    expect(await sortPushedDown('generic_clean')).toBe(false);
    expect(await sortPushedDown('generic_clean2')).toBe(false);
    for (const name of ['clean', 'clean2', 'sneaky']) await run(name, 100 * SCALE);
    console.log(`pushdown differential, random filters: ${tally.cases - before} finds`);
    expect(tally.mismatches).toEqual([]);
  }, 600_000);
});

/** One line of SQLite's EXPLAIN QUERY PLAN as FerretDB's explain returns it (`[query=N ]id=.. parent=.. notused=.. detail=..`). */
interface PlanLine {
  query: string;
  id: number;
  parent: number;
  detail: string;
}

function parsePlan(lines: string[]): PlanLine[] {
  return lines.map((line) => {
    const m = /^(?:query=(\d+) )?id=(\d+) parent=(\d+) notused=\d+ detail=(.*)$/.exec(line);
    if (!m) throw new Error(`unexpected plan line: ${line}`);
    return { query: m[1] ?? '0', id: Number(m[2]), parent: Number(m[3]), detail: m[4] };
  });
}

/**
 * The full scans of a plan, but for the fallback half of a guarded range: `<index search> AND guard UNION ALL <scan>
 * AND NOT guard`, where the guard reads the field's state in _ferretdb_pushdown_domains (patch 03). That half runs
 * only once the field stopped holding dates alone; then the find reads the collection as the unpatched build does.
 */
function fullScans(plan: PlanLine[]): PlanLine[] {
  const guardOf = (node: PlanLine) =>
    plan.some((s) => s.query === node.query && s.parent === node.parent && /^SCALAR SUBQUERY/.test(s.detail) && plan.some((c) => c.query === s.query && c.parent === s.id && c.detail.includes('_ferretdb_pushdown_domains')));
  // `SCAN t USING INDEX i` is the sort's walk of an index in order, which stops at the limit: not a full read.
  return plan.filter((line) => /^SCAN \S+$/.test(line.detail) && !guardOf(line));
}

/** Shapes the patched build still answers by reading the collection, and why that is acceptable. The list must stay exact. */
const SCANS: Record<string, string> = {
  'apps-repo.ts latestBuilds': 'one document per app, read in _id order up to the cap: a string sort is never pushed down (JSON text order is not MongoDB\'s)',
  'signing-keys-repo.ts revokeAllExcept': 'a handful of signing keys, every one but one revoked (also an exception on MongoDB: test/unit/query-indexes.test.ts)',
};

describe('the service\'s queries on the patched FerretDB', () => {
  it('each is an index search in SQLite (the plans are listed)', async () => {
    const make = new CaseMaker(mulberry32(SEED + 2));
    const listed: string[] = [];
    const scanning = new Set<string>();
    for (const repo of REPOSITORIES) {
      const collection = `${repo.file.replace(/-repo\.ts$/, '')}_clean`;
      for (const shape of repo.queries) {
        const c = make.typicalForShape(shape, ['d00001', 'd00100']);
        const command: Document = { find: collection, filter: c.filter, ...(c.sort ? { sort: c.sort, limit: c.limit } : {}) };
        const explained = await patched.client.db('pushdown').command({ explain: command });
        const plan = parsePlan(explained.queryPlanner.Plan as string[]);
        const where = `${repo.file} ${shape.method}`;
        if (fullScans(plan).length) scanning.add(where);
        listed.push(`${where} ${canonical(command)} filterPushdown=${explained.filterPushdown} sortPushdown=${explained.sortPushdown}`, ...plan.map((l) => `    ${l.query}:${l.detail}`));
      }
    }
    mkdirSync(path.join(REPO_ROOT, 'test', 'artifacts'), { recursive: true });
    writeFileSync(path.join(REPO_ROOT, 'test', 'artifacts', 'ferretdb-plans.txt'), `${listed.join('\n')}\n`);
    console.log(`SQLite plans of ${REPOSITORIES.reduce((n, r) => n + r.queries.length, 0)} repository queries on the patched FerretDB: test/artifacts/ferretdb-plans.txt`);
    expect([...scanning].filter((where) => !(where in SCANS))).toEqual([]);
    expect(Object.keys(SCANS).filter((where) => !scanning.has(where))).toEqual([]);
  }, 120_000);
});

describe('upgrades', () => {
  it('files written by the unpatched build open with the patched one, which searches their indexes, and open with the unpatched one again', async () => {
    const dir = path.join(work, 'upgrade');
    const make = new CaseMaker(mulberry32(SEED + 3));
    const docs = Array.from({ length: 300 }, (_, i) => make.document(i, GENERIC_FIELDS, 'clean'));
    const all = async (server: Server) => (await server.client.db('shieldgate').collection<Doc>('threats').find({}).sort({ _id: 1 }).toArray()).map(canonical);
    const page = { filter: { g: 's1' }, sort: { t: -1, _id: -1 } as const, limit: 20 };
    const pageOf = async (server: Server) => (await server.client.db('shieldgate').collection<Doc>('threats').find(page.filter).sort(page.sort).limit(page.limit).toArray()).map(canonical);

    const old = await open(referenceBuild, dir);
    const threats = old.client.db('shieldgate').collection<Doc>('threats');
    await threats.createIndexes(indexSpecs(GENERIC_INDEXES));
    await threats.insertMany(docs.map((d) => ({ ...d }) as Doc));
    const written = await all(old);
    const firstPage = await pageOf(old);
    await close(old);

    const upgraded = await open(PATCHED_BUILD, dir);
    try {
      expect(await all(upgraded)).toEqual(written);
      expect(await pageOf(upgraded)).toEqual(firstPage);
      // The same files, their indexes now searched; the date field's check runs once, then the page walks the index.
      const explained = async () => upgraded.client.db('shieldgate').command({ explain: { find: 'threats', ...page } });
      expect(fullScans(parsePlan((await explained()).queryPlanner.Plan))).toEqual([]);
      for (let i = 0; i < 100 && (await explained()).sortPushdown !== true; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await explained()).sortPushdown).toBe(true);
      // Written after the upgrade, and read back.
      await upgraded.client.db('shieldgate').collection<Doc>('threats').insertOne({ _id: 'after', g: 's1', t: new Date(Date.UTC(2025, 0, 30)) });
      expect(await pageOf(upgraded)).toContain(canonical({ _id: 'after', g: 's1', t: new Date(Date.UTC(2025, 0, 30)) }));
    } finally {
      await close(upgraded);
    }

    // Back to the unpatched build (a rollback): the patched build's bookkeeping in the files does not stop it.
    const back = await open(referenceBuild, dir);
    try {
      expect(await all(back)).toHaveLength(written.length + 1);
      await back.client.db('shieldgate').collection<Doc>('threats').insertOne({ _id: 'rolled-back', g: 's1', t: 5 });
      expect((await all(back)).length).toBe(written.length + 2);
    } finally {
      await close(back);
    }
    // And forward again: the value the rollback wrote is no date (the patched build's triggers in the file ran under
    // the unpatched build too), so the page no longer trusts the index order.
    const again = await open(PATCHED_BUILD, dir);
    try {
      const explained = await again.client.db('shieldgate').command({ explain: { find: 'threats', ...page } });
      expect(explained.sortPushdown).toBe(false);
      expect(await pageOf(again)).toContain(canonical({ _id: 'after', g: 's1', t: new Date(Date.UTC(2025, 0, 30)) }));
    } finally {
      await close(again);
    }
  }, 120_000);
});
