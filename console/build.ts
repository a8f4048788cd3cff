/**
 * Bundles the staff console (console/src) into dist/console: index.html plus name-HASH assets that the service
 * serves from memory (src/http/console.ts). Everything the page needs is in the bundle: no CDN, system fonts.
 *
 * GraphQL operations (console/operations/*.graphql, one named operation per file) become modules holding the
 * operation name, the SHA-256 of the exact file text and the text. When the trusted-documents manifest
 * (src/generated/trusted-documents.json) registers the document, the page sends the persisted-query form with the
 * hash only, and the text only if a server without the manifest answers PERSISTED_QUERY_NOT_FOUND; otherwise it
 * sends both, and the server checks the text against the hash (Apollo's automatic persisted queries).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { buildExplorer } from './build-explorer';
import { compressAssets } from './compress';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist', 'console');
const MANIFEST = path.join(ROOT, 'src', 'generated', 'trusted-documents.json');

function registered(): Map<string, string> {
  // document text -> hash, as the manifest states them
  const byText = new Map<string, string>();
  if (!fs.existsSync(MANIFEST)) return byText;
  const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
  for (const [key, text] of Object.entries(manifest)) byText.set(text, key.replace(/^sha256:/, ''));
  return byText;
}

function operationsPlugin(): Plugin {
  const manifest = registered();
  return {
    name: 'graphql-operations',
    setup(b) {
      b.onLoad({ filter: /\.graphql$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, 'utf8');
        const names = [...text.matchAll(/^\s*(query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/gm)].map((m) => m[2]);
        if (names.length !== 1) throw new Error(`${args.path}: one named operation per file (found ${names.length})`);
        const hash = createHash('sha256').update(text, 'utf8').digest('hex');
        const op = { operationName: names[0], sha256Hash: hash, query: text, registered: manifest.get(text) === hash };
        return { contents: `export default ${JSON.stringify(op)};`, loader: 'js' };
      });
    },
  };
}

async function main(): Promise<void> {
  fs.rmSync(OUT, { recursive: true, force: true });
  const result = await build({
    entryPoints: { console: path.join(__dirname, 'src', 'main.tsx') },
    bundle: true,
    outdir: path.join(OUT, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    format: 'esm',
    target: ['chrome120', 'firefox120', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    legalComments: 'eof',
    logLevel: 'warning',
    plugins: [operationsPlugin()],
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = outputs.find((name) => /^console-.*\.js$/.test(name));
  const style = outputs.find((name) => /^console-.*\.css$/.test(name));
  if (!script || !style) throw new Error(`bundle incomplete: ${outputs.join(', ')}`);
  const html = `<!doctype html>
<html lang="en" data-explorer>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>shieldgate console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body><div id="root"><noscript>The shieldgate console needs JavaScript.</noscript></div></body>
</html>
`;
  fs.writeFileSync(path.join(OUT, 'index.html'), html);
  const size = outputs.map((name) => `${name} ${(fs.statSync(path.join(OUT, 'assets', name)).size / 1024).toFixed(1)} KiB`);
  console.log(`console built: ${size.join(', ')}`);
  const explorerOut = path.join(OUT, 'explorer');
  const explorer = await buildExplorer(explorerOut, operationsPlugin());
  const kib = (name: string) => fs.statSync(path.join(explorerOut, 'assets', name)).size / 1024;
  const total = explorer.reduce((sum, name) => sum + kib(name), 0);
  console.log(`explorer built: ${explorer.length} files, ${(total / 1024).toFixed(2)} MiB (${explorer.map((name) => `${name} ${kib(name).toFixed(1)} KiB`).join(', ')})`);
  for (const [label, dir] of [['console', OUT], ['explorer', explorerOut]] as const) {
    const sizes = await compressAssets(dir);
    console.log(`${label} compressed: ${(sizes.raw / 1024).toFixed(1)} KiB, ${(sizes.brotli / 1024).toFixed(1)} KiB with Brotli`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
