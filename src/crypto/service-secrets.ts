import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';

interface ServiceSecretDoc {
  _id: string;
  value: string; // base64
  createdAt: Date;
}

/**
 * A named random secret shared by every instance (cursor MACs, device-id hashing). Created by the first instance that
 * asks: the upsert with $setOnInsert makes concurrent first starts agree on one value.
 * With a key-encryption key the secret in use is an HMAC of the stored value under it: the stored value alone (a copy
 * of the database) cannot test guessed device ids against their hashes nor forge cursors. Setting or changing the key
 * changes the secret: outstanding cursors stop being accepted and device hashes start anew from that moment.
 */
export async function loadServiceSecret(db: Db, name: string, kek: Buffer | null = null): Promise<Buffer> {
  const col = db.collection<ServiceSecretDoc>('service_secrets');
  await col.updateOne(
    { _id: name },
    { $setOnInsert: { value: randomBytes(32).toString('base64'), createdAt: new Date() } },
    { upsert: true },
  );
  const doc = await col.findOne({ _id: name });
  if (!doc) throw new Error(`service secret ${name} missing after upsert`);
  const stored = Buffer.from(doc.value, 'base64');
  return kek ? createHmac('sha256', kek).update(`shieldgate service secret\n${name}\n`).update(stored).digest() : stored;
}
