import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config';
import { startFerretDb } from './ferretdb';
import { portOpen, readRecord, recordFile, type RunningRecord } from './running-instance';

export interface ResolvedDatabase {
  uri: string;
  /** configured: MONGODB_URI; running: the embedded database of the service running on DATA_DIR; started: one of our own. */
  source: 'configured' | 'running' | 'started';
  stop(): Promise<void>;
}

/** The record of a service that runs on DATA_DIR now (its embedded database answers), or null. */
export async function runningService(config: Config): Promise<RunningRecord | null> {
  const recorded = readRecord(config.dataDir);
  return recorded && (await portOpen(recorded.port)) ? recorded : null;
}

/**
 * The database to use: MONGODB_URI when set; otherwise the embedded one (FerretDB on SQLite under DATA_DIR/db).
 * `reuseRunning` lets the CLI talk to the database of a service that is already running on the same data folder
 * (two servers must never open one SQLite folder at once). `record`, the service's own address: written to
 * DATA_DIR/embedded.json once the database runs; call this only once the service holds its port, so a second start
 * that cannot listen never replaces the record of the first.
 */
export async function resolveDatabase(config: Config, opts: { reuseRunning: boolean; record: { http: string } | null }): Promise<ResolvedDatabase> {
  if (config.mongodbUri) return { uri: config.mongodbUri, source: 'configured', stop: async () => undefined };
  if (opts.reuseRunning) {
    const running = await runningService(config);
    if (running) return { uri: running.uri, source: 'running', stop: async () => undefined };
  }
  const dataDir = path.join(config.dataDir, 'db');
  fs.mkdirSync(dataDir, { recursive: true });
  const ferret = await startFerretDb({ dataDir });
  const file = recordFile(config.dataDir);
  if (opts.record) {
    const record: RunningRecord = { uri: ferret.uri, port: ferret.port, pid: process.pid, http: opts.record.http };
    fs.writeFileSync(file, JSON.stringify(record));
  }
  return {
    uri: ferret.uri,
    source: 'started',
    stop: async () => {
      // Only our own record: another service may have taken DATA_DIR over meanwhile.
      if (opts.record && readRecord(config.dataDir)?.pid === process.pid) fs.rmSync(file, { force: true });
      await ferret.stop();
    },
  };
}
