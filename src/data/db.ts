import { MongoClient, MongoServerError, type Collection, type Db, type Document, type IndexDescription, type OptionalUnlessRequiredId } from 'mongodb';

export async function connectMongo(uri: string): Promise<MongoClient> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: 5_000,
    // Bounded so a wedged database surfaces as 503s instead of piling up requests.
    maxPoolSize: 50,
  });
  await client.connect();
  return client;
}

/**
 * Creates a collection's indexes. TTL indexes are an optimisation only (expiry is always checked against the stored
 * expiresAt): where the server refuses them, as FerretDB does, the plain index is created instead.
 */
export async function ensureIndexes(collection: Collection<any>, indexes: IndexDescription[]): Promise<void> {
  for (const index of indexes) {
    try {
      await collection.createIndexes([index]);
    } catch (error) {
      if (index.expireAfterSeconds !== undefined && error instanceof MongoServerError) {
        const { expireAfterSeconds: _ttl, ...plain } = index;
        await collection.createIndexes([{ ...plain, name: `${index.name ?? 'ttl'}_plain` }]);
        continue;
      }
      throw error;
    }
  }
}

export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/**
 * Inserts a document unless one with the same unique key exists; false then. A unique index decides between racing
 * writers, so exactly one of them gets true.
 */
export async function insertIfAbsent<T extends Document>(collection: Collection<T>, doc: OptionalUnlessRequiredId<T>): Promise<boolean> {
  try {
    await collection.insertOne(doc);
    return true;
  } catch (error) {
    if (isDuplicateKeyError(error)) return false;
    throw error;
  }
}

export type { Collection, Db, Document };
