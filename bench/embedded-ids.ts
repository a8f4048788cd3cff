// Embedded database bench: point reads and $inc by _id on FerretDB (SQLite) at 200,000 documents of a threat's size.
// FerretDB 1.24 pushes a lone `{_id}` filter down to SQLite; tools/ferretdb/build.sh makes SQLite serve it from the
// _id index (see there). BENCH_FERRETDB names another binary to compare with, e.g. one built without the fix
// (`cd tools/ferretdb && go build -o /tmp/ferretdb-plain .`). BENCH_DOCS changes the count.
// Run: npx tsx bench/embedded-ids.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { startFerretDb } from '../src/embedded/ferretdb';
import { fmt } from './support';

const DOCS = Number(process.env.BENCH_DOCS ?? 200_000);
const CHUNK = 1_000;
const READS = 60;
const INCS = 20;

interface BenchDoc {
  _id: string;
  appId: string;
  mergeKey: string;
  detection: string;
  verdict: string;
  signals: string[];
  occurredAt: Date;
  hits: number;
}

const idOf = (i: number) => `thr_${i.toString(16).padStart(32, '0')}`;

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `median ${fmt(at(0.5))} ms, p95 ${fmt(at(0.95))} ms, max ${fmt(sorted[sorted.length - 1])} ms`;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-ids-'));
  const ferret = await startFerretDb({ dataDir, ...(process.env.BENCH_FERRETDB ? { binary: process.env.BENCH_FERRETDB } : {}) });
  const client = new MongoClient(ferret.uri);
  try {
    await client.connect();
    const col = client.db('bench').collection<BenchDoc>('threats');
    const started = Date.now();
    for (let i = 0; i < DOCS; i += CHUNK) {
      await col.insertMany(
        Array.from({ length: Math.min(CHUNK, DOCS - i) }, (_, j) => ({
          _id: idOf(i + j),
          appId: 'app_bench',
          mergeKey: (i + j).toString(16).padStart(64, '0'),
          detection: 'hooking',
          verdict: 'compromised',
          signals: ['frida_server', 'suspicious_library'],
          occurredAt: new Date(1_700_000_000_000 + (i + j) * 1000),
          hits: 1,
        })),
      );
    }
    console.log(`inserted ${DOCS} documents in ${fmt((Date.now() - started) / 1000)} s`);

    const reads: number[] = [];
    for (let k = 0; k < READS; k++) {
      const id = idOf(Math.floor(((k + 0.5) / READS) * DOCS)); // spread over the whole table: a scan's cost depends on where
      const t = performance.now();
      if (!(await col.findOne({ _id: id }))) throw new Error(`missing ${id}`);
      reads.push(performance.now() - t);
    }
    console.log(`findOne by _id (${READS} ids across the table): ${stats(reads)}`);

    const incs: number[] = [];
    for (let k = 0; k < INCS; k++) {
      const t = performance.now();
      await col.updateOne({ _id: idOf(Math.floor(((k + 0.5) / INCS) * DOCS)) }, { $inc: { hits: 1 } });
      incs.push(performance.now() - t);
    }
    console.log(`updateOne $inc by _id (${INCS} ids): ${stats(incs)}`);
  } finally {
    await client.close();
    await ferret.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
