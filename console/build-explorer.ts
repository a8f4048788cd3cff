/**
 * Bundles the GraphQL explorer (console/explorer: GraphiQL on React) into dist/console/explorer: index.html and
 * name-HASH assets, served from memory by src/http/console.ts at /console/explorer (and not loaded at all where
 * GRAPHQL_SANDBOX is off). Monaco's three web workers are bundled first as classic scripts, so their hashed names
 * can be written into the page's code. No source maps: the code is nearly all GraphiQL's and Monaco's, and their
 * maps would weigh tens of megabytes in the service's memory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const TARGET = ['chrome120', 'firefox120', 'safari16'];

const WORKERS = {
  editor: 'monaco-editor/esm/vs/editor/editor.worker.js',
  json: 'monaco-editor/esm/vs/language/json/json.worker.js',
  graphql: 'monaco-graphql/esm/graphql.worker.js',
} as const;

/**
 * GraphiQL's stylesheet (graphiql/style.css) already holds Monaco's rules and its icon font; the stylesheets Monaco's
 * modules import would only be emitted again, unused, beside the lazy chunks.
 */
const monacoStylesInGraphiql: Plugin = {
  name: 'monaco-styles-in-graphiql',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]monaco-editor[\\/].*\.css$/ }, () => ({ contents: '', loader: 'empty' }));
  },
};

async function buildWorkers(assets: string): Promise<Record<keyof typeof WORKERS, string>> {
  const names = {} as Record<keyof typeof WORKERS, string>;
  for (const [label, entry] of Object.entries(WORKERS) as Array<[keyof typeof WORKERS, string]>) {
    const result = await build({
      entryPoints: { [`${label}-worker`]: require.resolve(entry) },
      bundle: true,
      outdir: assets,
      entryNames: '[name]-[hash]',
      format: 'iife',
      target: TARGET,
      minify: true,
      metafile: true,
      legalComments: 'eof',
      logLevel: 'warning',
    });
    names[label] = path.basename(Object.keys(result.metafile.outputs)[0]);
  }
  return names;
}

/** Writes the explorer's page and assets into `out` (dist/console/explorer); returns the assets' names. */
export async function buildExplorer(out: string, operations: Plugin): Promise<string[]> {
  const assets = path.join(out, 'assets');
  const workers = await buildWorkers(assets);
  const result = await build({
    entryPoints: { explorer: path.join(__dirname, 'explorer', 'main.tsx') },
    bundle: true,
    outdir: assets,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    // Monaco and Prettier are loaded when GraphiQL first needs them, as chunks of their own.
    splitting: true,
    format: 'esm',
    target: TARGET,
    jsx: 'automatic',
    jsxImportSource: 'react',
    define: { EXPLORER_WORKERS: JSON.stringify(workers), 'process.env.NODE_ENV': '"production"' },
    minify: true,
    metafile: true,
    legalComments: 'eof',
    logLevel: 'warning',
    plugins: [operations, monacoStylesInGraphiql],
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = outputs.find((name) => /^explorer-.*\.js$/.test(name));
  const style = outputs.find((name) => /^explorer-.*\.css$/.test(name));
  if (!script || !style) throw new Error(`explorer bundle incomplete: ${outputs.join(', ')}`);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>shieldgate GraphQL explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/explorer/assets/${style}">
<script type="module" src="/console/explorer/assets/${script}"></script>
</head>
<body><div id="root"><noscript>The GraphQL explorer needs JavaScript.</noscript></div></body>
</html>
`;
  fs.writeFileSync(path.join(out, 'index.html'), html);
  return [...Object.values(workers), ...outputs];
}
