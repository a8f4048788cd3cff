import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactStore } from '../storage/artifact-store';

const PREFIX = 'shieldgate-scan-';

export interface LocalArtifact {
  path: string;
  cleanup(): Promise<void>;
}

/**
 * Copies a stored artifact to a private temporary file. The analyser needs random access (it reads the zip's
 * central directory, then only the entries it needs), which a streamed S3 body cannot give; the copy is streamed,
 * so memory stays flat whatever the size. The SHA-256 is checked again on the way: a file that changed in the
 * store since it was verified at upload is refused instead of analysed.
 */
export async function copyArtifactToTemp(store: ArtifactStore, key: string, fileName: string, expectedSha256: string): Promise<LocalArtifact> {
  const dir = await mkdtemp(path.join(os.tmpdir(), PREFIX));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const body = await store.get(key);
    if (!body) throw new Error('artifact not found in the store');
    const file = path.join(dir, fileName);
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(body, hashing, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    if (hash.digest('hex') !== expectedSha256) throw new Error('stored artifact does not match its SHA-256');
    return { path: file, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Removes the copies a process left behind when it died during a scan (each up to 500 MB; `cleanup` never ran):
 * those whose directory and files were last written longer than `olderThanMs` ago, which no live scan still uses (an
 * analysis ends within SCAN_DEADLINE_S of its copy). Run by the job runner's sweep each minute; returns how many were removed.
 */
export async function removeStaleCopies(olderThanMs: number, now = Date.now(), tmp = os.tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of (await readdir(tmp)).filter((entry) => entry.startsWith(PREFIX))) {
    const dir = path.join(tmp, name);
    try {
      const times = [(await stat(dir)).mtimeMs];
      for (const file of await readdir(dir)) times.push((await stat(path.join(dir, file))).mtimeMs);
      if (now - Math.max(...times) < olderThanMs) continue;
      await rm(dir, { recursive: true, force: true });
      removed++;
    } catch {
      // Removed meanwhile by its own scan, or not ours to read: left alone.
    }
  }
  return removed;
}
