/**
 * The floor for `npm run bench:upload`: the least an upload can do. A bare node:http handler that streams the body
 * through a SHA-256 into the same kind of store the service uses (a temporary file renamed into the artifact folder,
 * or the same multipart upload to the same S3 server), then answers. No framework, no token, no database.
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { S3Client } from '@aws-sdk/client-s3';
import { uploadStream } from '../src/storage/s3-multipart';

const dir = process.env.ARTIFACT_DIR!;
const s3 = process.env.ARTIFACT_STORE === 's3'
  ? new S3Client({
      endpoint: process.env.S3_ENDPOINT,
      region: process.env.S3_REGION ?? 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID!, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY! },
    })
  : null;

async function store(body: Readable, sizeBytes: number): Promise<void> {
  const name = randomBytes(8).toString('hex');
  if (s3) {
    const key = `floor/${name}`;
    // The service's part size and parallelism: the defaults of uploadStream.
    await uploadStream(body, sizeBytes, { client: s3, bucket: process.env.S3_BUCKET!, key, contentType: 'application/octet-stream' });
    return;
  }
  const temp = path.join(dir, `floor-${name}.partial`);
  await pipeline(body, fs.createWriteStream(temp));
  fs.renameSync(temp, path.join(dir, `floor-${name}`));
}

const server = http.createServer(async (req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  const hash = createHash('sha256');
  let bytes = 0;
  const hasher = new Transform({
    transform(chunk, _enc, cb) {
      bytes += chunk.length;
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  req.pipe(hasher);
  await store(hasher, Number(req.headers['content-length']));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes, sha256: hash.digest('hex') }));
});
server.listen(Number(process.env.PORT), '127.0.0.1');
