/**
 * The floor for `npm run bench`: the least a whoami can do. Parse the key, look it up by id in the same collection,
 * compare the secret hash, increment a Redis counter with an expiry, answer JSON. No framework, no validation.
 */
import http from 'node:http';
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';
import { createHash, timingSafeEqual } from 'node:crypto';

async function main(): Promise<void> {
  const mongo = new MongoClient(process.env.MONGODB_URI!);
  await mongo.connect();
  const keys = mongo.db(process.env.MONGODB_DATABASE!).collection<{ _id: string; appId: string; scopes: string[]; secretHash: string }>('api_keys');
  const redis = new Redis(process.env.REDIS_URL!);
  const server = http.createServer(async (req, res) => {
    if (req.url === '/healthz') return void res.end('ok');
    const m = /^Bearer svc_(live|test)_([A-Za-z0-9]+)_([A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? '');
    const key = m ? await keys.findOne({ _id: m[2] }) : null;
    const hash = m ? createHash('sha256').update(m[3]).digest() : Buffer.alloc(32);
    if (!key || !timingSafeEqual(hash, Buffer.from(key.secretHash, 'hex'))) {
      res.writeHead(401).end();
      return;
    }
    const counter = `floor:${key._id}:${Math.floor(Date.now() / 60000)}`;
    await redis.multi().incr(counter).expire(counter, 60).exec();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ appId: key.appId, scopes: key.scopes, auth: 'api_key' }));
  });
  server.listen(Number(process.env.PORT), '127.0.0.1');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
