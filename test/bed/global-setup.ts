/**
 * Jest global setup: one FerretDB, one redis-server and one versitygw for the whole run, unless MONGODB_URI,
 * REDIS_URL or S3_ENDPOINT name servers to use instead. Workers are forked after this runs, so what is set on
 * process.env here is what they see as TEST_*.
 */
import { startMongo, startRedis, startS3 } from './servers';

export type StopTestBed = () => Promise<void>;

/** Set here, read by global-teardown.ts: Jest runs both in its main process. */
export const TEST_BED_STOP = Symbol.for('shieldgate.testBed.stop');

export default async function globalSetup(): Promise<void> {
  const env = process.env;
  // The SDK warns once per worker when a Node release nears its end; the engines field, not each test run, tracks that.
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const stops: StopTestBed[] = [];
  const stopAll: StopTestBed = async () => {
    await Promise.allSettled(stops.splice(0).map((stop) => stop()));
  };
  (globalThis as Record<symbol, unknown>)[TEST_BED_STOP] = stopAll;

  try {
    await Promise.all([
      (async () => {
        if (env.MONGODB_URI) {
          env.TEST_MONGODB_URI = env.MONGODB_URI;
          return;
        }
        const mongo = await startMongo();
        stops.push(() => mongo.stop());
        env.TEST_MONGODB_URI = mongo.uri;
      })(),
      (async () => {
        if (env.REDIS_URL) {
          env.TEST_REDIS_URL = env.REDIS_URL;
          return;
        }
        const redis = await startRedis();
        stops.push(() => redis.stop());
        env.TEST_REDIS_URL = redis.url;
      })(),
      (async () => {
        if (env.S3_ENDPOINT) {
          env.TEST_S3_ENDPOINT = env.S3_ENDPOINT;
          env.TEST_S3_ACCESS_KEY_ID = env.AWS_ACCESS_KEY_ID ?? '';
          env.TEST_S3_SECRET_ACCESS_KEY = env.AWS_SECRET_ACCESS_KEY ?? '';
          env.TEST_S3_REGION = env.S3_REGION ?? env.AWS_REGION ?? 'us-east-1';
          return;
        }
        const s3 = await startS3();
        stops.push(() => s3.stop());
        env.TEST_S3_ENDPOINT = s3.endpoint;
        env.TEST_S3_ACCESS_KEY_ID = s3.accessKeyId;
        env.TEST_S3_SECRET_ACCESS_KEY = s3.secretAccessKey;
        env.TEST_S3_REGION = s3.region;
      })(),
    ]);
  } catch (error) {
    // Jest skips the teardown when setup throws: stop whatever did start.
    await stopAll();
    throw error;
  }
}
