#!/usr/bin/env node
'use strict';
// The operator CLI. Runs the compiled code (npm ci builds it); from a checkout without a build, the TypeScript source.
const path = require('node:path');
const fs = require('node:fs');

const compiled = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
let cli;
if (fs.existsSync(compiled)) {
  cli = require(compiled);
} else {
  require('tsx/cjs');
  cli = require(path.join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
cli.runCli(process.argv.slice(2)).then((code) => process.exit(code));
