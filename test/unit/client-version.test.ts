// The version the client reports (and bundles into the action) is its package's version.
import fs from 'node:fs';
import path from 'node:path';
import { VERSION } from '../../client/src/version';

it('client/src/version.ts says the version of client/package.json', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'client', 'package.json'), 'utf8'));
  expect(VERSION).toBe(pkg.version);
});
