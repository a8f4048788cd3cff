import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * What a running service records in DATA_DIR/embedded.json: the address of its embedded database (so the CLI
 * reaches the same one instead of opening the SQLite folder in a second server), its pid and its HTTP address.
 */
export interface RunningRecord {
  uri: string;
  port: number;
  pid: number;
  /** The service's own address; absent in files written before it was recorded. */
  http?: string;
}

export function recordFile(dataDir: string): string {
  return path.join(dataDir, 'embedded.json');
}

/** The record of DATA_DIR, or null when there is none or it cannot be read (a half-written or foreign file). */
export function readRecord(dataDir: string): RunningRecord | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(recordFile(dataDir), 'utf8')) as Partial<RunningRecord>;
    if (typeof parsed.uri !== 'string' || typeof parsed.port !== 'number' || typeof parsed.pid !== 'number') return null;
    return parsed as RunningRecord;
  } catch {
    return null;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The address a client dials for a listening host: a wildcard host is reached on loopback. */
export function dialAddress(host: string, port: number): string {
  const dial = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${dial.includes(':') ? `[${dial}]` : dial}:${port}`;
}

/** True when a shieldgate answers /healthz at the address (its body names the service), within a second. */
export async function shieldgateAnswers(address: string): Promise<boolean> {
  try {
    const res = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { service?: unknown };
    return res.ok && body.service === 'shieldgate';
  } catch {
    return false;
  }
}

/** One line for a port that another process holds, naming the shieldgate there when one answers. */
export async function describeBusyPort(host: string, port: number, dataDir: string): Promise<string> {
  const address = dialAddress(host, port);
  const head = `port ${port} (${host}) is already in use`;
  if (!(await shieldgateAnswers(address))) return `${head} by another program; stop it or start with another PORT`;
  const record = readRecord(dataDir);
  const same = record && record.http === address && pidAlive(record.pid);
  const which = same ? `pid ${record.pid}, DATA_DIR ${dataDir}` : 'on another DATA_DIR or database';
  return `${head} by a running shieldgate at ${address} (${which}); use it, stop it, or start with another PORT`;
}
