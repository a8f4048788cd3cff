// Protects: the verifying stream of uploads (src/uploads/verifying-stream.ts): it passes a body that matches its
// declaration, fails at the first byte past the declared size and at the end of a shorter or different body, and
// records when the last chunk went through on the clock it is given (what the stall watchdog measures).
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadBodyError, VerifyingStream } from '../../src/uploads/verifying-stream';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function run(body: Buffer[], size: number, digest: string): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(body), new VerifyingStream(size, digest), new Writable({ write: (c, _e, done) => (out.push(c), done()) }));
  return Buffer.concat(out);
}

it('passes a body that matches its declaration unchanged', async () => {
  const bytes = randomBytes(300_000);
  const parts = [bytes.subarray(0, 1), bytes.subarray(1, 200_000), bytes.subarray(200_000)];
  expect((await run(parts, bytes.length, sha(bytes))).equals(bytes)).toBe(true);
});

it('fails a longer body, a shorter one and another hash', async () => {
  const bytes = randomBytes(1000);
  await expect(run([bytes, Buffer.from([1])], 1000, sha(bytes))).rejects.toMatchObject({ kind: 'too_large' });
  await expect(run([bytes.subarray(0, 999)], 1000, sha(bytes))).rejects.toMatchObject({ kind: 'mismatch' });
  const other = Buffer.from(bytes);
  other[500] ^= 1;
  await expect(run([other], 1000, sha(bytes))).rejects.toBeInstanceOf(UploadBodyError);
});

it('records when the last chunk went through, on the clock it is given', async () => {
  let now = 1_000;
  const stream = new VerifyingStream(3, sha(Buffer.from('abc')), () => now);
  expect(stream.lastChunkAt).toBe(1_000); // made: the count starts here
  stream.resume();
  now = 5_000;
  stream.write(Buffer.from('a'));
  await new Promise((resolve) => setImmediate(resolve));
  expect(stream.lastChunkAt).toBe(5_000);
  now = 9_000; // time passes with no chunk: nothing moves
  await new Promise((resolve) => setImmediate(resolve));
  expect(stream.lastChunkAt).toBe(5_000);
  stream.write(Buffer.from('bc'));
  await new Promise((resolve) => setImmediate(resolve));
  expect(stream.lastChunkAt).toBe(9_000);
});
