#!/usr/bin/env node
'use strict';
// `npm start`: builds only what changed since its last build, then runs the service in this process (so SIGTERM
// reaches it directly). Plain JavaScript on purpose: loading tsx or a TypeScript compiler to learn that nothing
// changed would cost seconds on every start. `--build-only` builds what is stale and exits (npm's `prepare` runs it,
// so the first start after `npm ci` finds everything built and stamped). A part is stale when any file or folder among its inputs (a folder's
// time changes when a file is added, renamed or deleted) is newer than its stamp, or when its output is missing.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const STAMPS = path.join(ROOT, '.cache', 'build-stamps');

/** What `npm start` needs built: the service (tsconfig.build.json) and the staff console it serves. */
const PARTS = [
  {
    name: 'service',
    inputs: ['src', 'rest', 'resolvers', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    output: 'dist/src/main.js',
    build: [process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', path.join(STAMPS, 'service.tsbuildinfo')]],
  },
  {
    name: 'console',
    // The bundle also embeds the trusted-documents manifest and the generated operation types of src/generated.
    inputs: ['console', 'src/generated', 'package-lock.json'],
    output: 'dist/console/index.html',
    build: ['npm', ['run', '--silent', 'build:console']],
  },
];

/** Newest modification time (ms) among a path and, for a folder, everything under it. */
function newest(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  let time = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of fs.readdirSync(p)) time = Math.max(time, newest(path.join(p, entry)));
  }
  return time;
}

function stampTime(stamp) {
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

/** Builds a stale part; returns false when its build failed. The stamp takes the time the build started, so a file
 * saved during the build makes the next start build again. */
function ensureBuilt(part) {
  const stamp = path.join(STAMPS, part.name);
  const inputsTime = Math.max(...part.inputs.map((p) => newest(path.join(ROOT, p))));
  if (fs.existsSync(path.join(ROOT, part.output)) && inputsTime <= stampTime(stamp)) return true;
  const started = new Date();
  const t0 = Date.now();
  const [cmd, args] = part.build;
  const run = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) return false;
  fs.mkdirSync(STAMPS, { recursive: true });
  fs.writeFileSync(stamp, '');
  fs.utimesSync(stamp, started, started);
  console.error(`start: built the ${part.name} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return true;
}

for (const part of PARTS) {
  if (!ensureBuilt(part)) {
    console.error(`start: the ${part.name} did not build (see above); nothing started`);
    process.exit(1);
  }
}
if (!process.argv.includes('--build-only')) require(path.join(ROOT, 'dist', 'src', 'main.js'));
