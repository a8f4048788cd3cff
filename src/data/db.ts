import { MongoBulkWriteError, MongoClient, MongoServerError, type Collection, type Db, type Document, type Filter, type IndexDescription, type OptionalUnlessRequiredId, type WithoutId } from 'mongodb';

export async function connectMongo(uri: string): Promise<MongoClient> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: 5_000,
    // Bounded so a wedged database surfaces as 503s instead of piling up requests.
    maxPoolSize: 50,
    // Command monitoring feeds the database latency metric (src/metrics/mongo.ts): names and durations only.
    monitorCommands: true,
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

/**
 * Claims a record keyed by its _id: inserts `doc`, or, when a record of that _id exists but matches `expired` (its
 * lease or lifetime is over), replaces it in one conditional write. True for exactly one of any number of concurrent
 * claimers: the unique _id decides the insert, the condition on the stored record decides the take-over.
 */
export async function claimOrTakeOver<T extends Document & { _id: string }>(collection: Collection<T>, doc: T, expired: Filter<T>): Promise<boolean> {
  if (await insertIfAbsent(collection, doc as OptionalUnlessRequiredId<T>)) return true;
  const replaced = await collection.findOneAndReplace({ _id: doc._id, ...expired } as Filter<T>, doc as WithoutId<T>);
  return replaced !== null;
}

/**
 * Inserts the documents in one unordered round trip and returns the positions of those whose unique key was already
 * taken (by an earlier or a concurrent writer); the others are inserted. Any error other than a duplicate key fails
 * the call, as does a bulk error that names no document.
 */
export async function insertManyIfAbsent<T extends Document>(collection: Collection<T>, docs: OptionalUnlessRequiredId<T>[]): Promise<Set<number>> {
  const taken = new Set<number>();
  if (docs.length === 0) return taken;
  try {
    await collection.insertMany(docs, { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (writeErrors.length === 0) throw error;
    for (const writeError of writeErrors) {
      if (writeError.code !== 11000) throw error;
      taken.add(writeError.index);
    }
  }
  return taken;
}

export type { Collection, Db, Document };

/**
 * Inserts `doc` into the first free slot 0..max-1 of its app; null when every slot is taken. Without transactions,
 * "count then insert" lets two concurrent creations both see room for one; a unique (appId, slot) index makes an
 * insert past the cap impossible instead. Each failed attempt means another writer took the slot we chose, so the
 * loop is bounded by the slot count.
 */
export async function insertIntoFreeSlot<T extends Document & { appId: string; slot: number }>(
  collection: Collection<T>,
  doc: Omit<T, 'slot'>,
  max: number,
): Promise<T | null> {
  for (let attempt = 0; attempt <= max; attempt++) {
    const taken = await collection.find({ appId: doc.appId } as Filter<T>, { projection: { slot: 1 } }).toArray();
    const used = new Set(taken.map((d) => d.slot));
    const slot = Array.from({ length: max }, (_, i) => i).find((i) => !used.has(i));
    if (slot === undefined) return null;
    const full = { ...doc, slot } as unknown as T;
    try {
      await collection.insertOne(full as OptionalUnlessRequiredId<T>);
      return full;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }
  return null;
}
