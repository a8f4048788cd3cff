#!/usr/bin/env node
'use strict';
// Compiled by `npm run build` (run by `npm ci` through the root package's prepare script).
require('../dist/cli.js').main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
