import type { Handler } from '../handler';
import { DomainError } from '../../src/errors';

export const getScan: Handler = async () => {
  throw new DomainError('unavailable', 'Not available yet.');
};

