// Seeds a bench's app straight into its database, as the operator would at the command line.
import type { MongoClient } from 'mongodb';
import { closeDeps, createDeps } from '../src/bootstrap';
import { loadConfig } from '../src/core/config';
import { createLogger } from '../src/core/logger';
import { createApp } from '../src/services/apps-service';
import { createApiKey } from '../src/services/keys-service';
import { operatorContext } from '../src/services/operator-context';

export type SeededApp = { appId: string; readers: string[]; writer: string };

/**
 * An app with `readers` builds:read keys (a whoami load spreads over them) and one key that uploads and reads scans;
 * `releaseWriter`: that key is a release key (its builds are release builds, whose scans are baselines).
 */
export async function seedUploadApp(client: MongoClient, env: { MONGODB_URI: string; MONGODB_DATABASE: string; ARTIFACT_DIR: string }, readers: number, releaseWriter = false): Promise<SeededApp> {
  const deps = await createDeps(loadConfig(env), { mongo: client, logger: createLogger('silent') });
  try {
    const ctx = operatorContext(deps);
    const app = await createApp(ctx, { name: 'bench', plan: 'enterprise' });
    const keys: string[] = [];
    for (let k = 0; k < readers; k++) keys.push((await createApiKey(ctx, { appId: app._id, scopes: ['builds:read'], mode: 'live' })).key);
    const writer = (await createApiKey(ctx, { appId: app._id, scopes: ['builds:write', 'builds:read', 'scans:read'], mode: 'live', releaseBuilds: releaseWriter })).key;
    return { appId: app._id, readers: keys, writer };
  } finally {
    await closeDeps(deps, { closeMongo: false });
  }
}
