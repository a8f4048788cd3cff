import type { Handler } from '../handler';
import { DomainError } from '../../src/errors';

export const listThreats: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const ingestEvents: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

export const verifyAttest: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

