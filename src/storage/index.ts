import type { Config } from '../core/config';
import type { Logger } from '../core/logger';
import type { ArtifactStore } from './artifact-store';
import { FsArtifactStore } from './fs-store';
import { S3ArtifactStore } from './s3-store';

export * from './artifact-store';

/** The artifact store named by ARTIFACT_STORE. */
export function createArtifactStore(config: Config, logger: Logger): ArtifactStore {
  if (config.artifactStore === 's3') {
    return new S3ArtifactStore(
      {
        bucket: config.s3.bucket,
        endpoint: config.s3.endpoint,
        region: config.s3.region,
        forcePathStyle: config.s3.forcePathStyle,
        credentials: config.s3.credentials && { ...config.s3.credentials }, // the SDK annotates the object: never hand it the frozen config
      },
      logger,
    );
  }
  return new FsArtifactStore(config.artifactDir);
}
