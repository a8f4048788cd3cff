import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';

export interface FileDigest {
  sizeBytes: number;
  sha256: string;
}

/** Size and SHA-256 of a file, read once as a stream (a 500 MB package is never held in memory). */
export async function digestFile(path: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  await pipeline(
    fs.createReadStream(path, { highWaterMark: 1024 * 1024 }),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        sizeBytes += chunk.length;
        hash.update(chunk);
        done();
      },
    }),
  );
  return { sizeBytes, sha256: hash.digest('hex') };
}
