import fs from 'node:fs';
import path from 'node:path';
import { SCHEMA_DIR } from '../core/paths';

/** The SDL of every domain, one file each under schema/, in a stable order (base first). */
export function loadTypeDefs(): string {
  return fs
    .readdirSync(SCHEMA_DIR)
    .filter((name) => name.endsWith('.graphql'))
    .sort((a, b) => (a === 'base.graphql' ? -1 : b === 'base.graphql' ? 1 : a.localeCompare(b)))
    .map((name) => fs.readFileSync(path.join(SCHEMA_DIR, name), 'utf8'))
    .join('\n');
}
