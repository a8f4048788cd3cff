import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../core/config';
import { startFerretDb } from './ferretdb';

/** Where a running service records the address of its embedded database, so the CLI reaches the same one. */
function addressFile(config: Config): string {
  return path.join(config.dataDir, 'embedded.json');
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ResolvedDatabase {
  uri: string;
  stop(): Promise<void>;
}

/**
 * The database to use: MONGODB_URI when set; otherwise the embedded one (FerretDB on SQLite under .data/db).
 * `reuseRunning` lets the CLI talk to the database of a service that is already running on the same data folder
 * (two servers must never open one SQLite folder at once).
 */
export async function resolveDatabase(config: Config, opts: { reuseRunning: boolean; record: boolean }): Promise<ResolvedDatabase> {
  if (config.mongodbUri) return { uri: config.mongodbUri, stop: async () => undefined };
  const file = addressFile(config);
  if (opts.reuseRunning && fs.existsSync(file)) {
    const recorded = JSON.parse(fs.readFileSync(file, 'utf8')) as { uri: string; port: number };
    if (await portOpen(recorded.port)) return { uri: recorded.uri, stop: async () => undefined };
  }
  const dataDir = path.join(config.dataDir, 'db');
  fs.mkdirSync(dataDir, { recursive: true });
  const ferret = await startFerretDb({ dataDir });
  if (opts.record) fs.writeFileSync(file, JSON.stringify({ uri: ferret.uri, port: ferret.port, pid: process.pid }));
  return {
    uri: ferret.uri,
    stop: async () => {
      if (opts.record) fs.rmSync(file, { force: true });
      await ferret.stop();
    },
  };
}
