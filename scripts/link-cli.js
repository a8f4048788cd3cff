#!/usr/bin/env node
'use strict';
// Links the operator CLI as node_modules/.bin/shieldgate (npm's `prepare` runs this on `npm ci` and `npm install`).
// The root package.json has no `bin` on purpose: for a `bin` of the project itself, `npx shieldgate` first installs
// the whole checkout into npm's npx cache (50 s or more on a first call), while a command already in
// node_modules/.bin runs at once. `npx --no shieldgate` then never looks beyond this checkout.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const binDir = path.join(root, 'node_modules', '.bin');
const link = path.join(binDir, 'shieldgate');
const target = path.relative(binDir, path.join(root, 'bin', 'shieldgate.js'));

fs.mkdirSync(binDir, { recursive: true });
let current = null;
try {
  current = fs.readlinkSync(link);
} catch {
  // absent, or a file rather than a link: replaced below
}
if (current !== target) {
  fs.rmSync(link, { force: true });
  fs.symlinkSync(target, link);
}
