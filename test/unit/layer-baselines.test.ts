// Protects: the layer rules hold as written, with nothing excused. `npm run layers:baseline` can record violations
// and folder-cycle edges as known, which the check then tolerates; both records must stay empty, so a violation
// recorded to get a change through fails here instead of passing silently.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

it.each(['.dependency-cruiser-known-violations.json', '.folder-cycles-known.json'])('%s records nothing', (file) => {
  expect(JSON.parse(readFileSync(path.join(root, file), 'utf8'))).toEqual([]);
});
