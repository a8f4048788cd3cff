import type { Handler } from '../handler';
import { DomainError } from '../../src/errors';

export const createBuild: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const getBuild: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const createUploadUrl: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const uploadBuildArtifact: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

