import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { assertKey, StoreUnavailableError, type ArtifactStore } from './artifact-store';

/**
 * Artifacts as files under one directory. A body is written to a temporary file in `<dir>/.staging` (same
 * filesystem) and renamed onto its key only after it ended cleanly: rename is atomic, so a reader sees either the
 * whole verified file or nothing.
 */
export class FsArtifactStore implements ArtifactStore {
  readonly kind = 'fs' as const;
  private readonly staging: string;

  constructor(private readonly dir: string) {
    this.staging = path.join(dir, '.staging');
  }

  async init(): Promise<void> {
    await fsp.mkdir(this.staging, { recursive: true });
  }

  private file(key: string): string {
    assertKey(key);
    return path.join(this.dir, key);
  }

  async put(key: string, body: Readable, _sizeBytes: number): Promise<void> {
    const final = this.file(key);
    const temp = path.join(this.staging, `${randomBytes(12).toString('hex')}.partial`);
    let bodyError: unknown = null;
    body.once('error', (err) => (bodyError = err));
    try {
      await this.init();
      await fsp.mkdir(path.dirname(final), { recursive: true });
      await pipeline(body, fs.createWriteStream(temp, { flags: 'wx' }));
      await fsp.rename(temp, final);
    } catch (error) {
      await fsp.rm(temp, { force: true }).catch(() => undefined);
      if (bodyError) throw bodyError;
      throw new StoreUnavailableError('artifact directory not writable', { cause: error });
    }
  }

  async get(key: string): Promise<Readable | null> {
    try {
      const handle = await fsp.open(this.file(key), 'r');
      return handle.createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return fsp.access(this.file(key)).then(
      () => true,
      () => false,
    );
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.file(key), { force: true });
  }
}
