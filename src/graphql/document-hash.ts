import { createHash } from 'node:crypto';

/**
 * The id of a trusted document: `sha256:` and the hex SHA-256 of its exact UTF-8 text (the whole .graphql file, byte
 * for byte). The wire's `extensions.persistedQuery.sha256Hash` carries the hex part alone, as Apollo clients send it.
 */
export function documentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export const TRUSTED_ID_PREFIX = 'sha256:';
