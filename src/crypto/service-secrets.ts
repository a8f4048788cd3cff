import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';

interface ServiceSecretDoc {
  _id: string;
  value: string; // base64
  createdAt: Date;
}

/**
 * A named random secret shared by every instance (cursor MACs, device-id hashing). Created by the first instance that
 * asks: the upsert with $setOnInsert makes concurrent first starts agree on one value.
 */
export async function loadServiceSecret(db: Db, name: string): Promise<Buffer> {
  const col = db.collection<ServiceSecretDoc>('service_secrets');
  await col.updateOne(
    { _id: name },
    { $setOnInsert: { value: randomBytes(32).toString('base64'), createdAt: new Date() } },
    { upsert: true },
  );
  const doc = await col.findOne({ _id: name });
  if (!doc) throw new Error(`service secret ${name} missing after upsert`);
  return Buffer.from(doc.value, 'base64');
}
