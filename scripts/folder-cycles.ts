/**
 * The folder half of the layer check (CONTRIBUTING.md, "Layer check"). dependency-cruiser resolves the runtime
 * imports of src/, rest/ and resolvers/ (with .dependency-cruiser.cjs; `import type` left out); this script folds
 * them onto folders (a file's own folder, not its parents: dependency-cruiser's folder scope counts `src` together
 * with everything under it, so `src` and `resolvers` would always form a cycle) and finds the strongly connected
 * groups of folders. Every folder edge inside such a group is a cycle edge.
 *
 * The edges recorded in .folder-cycles-known.json are tolerated while they are untied; a cycle edge not recorded
 * there fails the check, so the knot can only shrink. `--update` records today's edges (run it after untying one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '..');
const KNOWN_FILE = path.join(ROOT, '.folder-cycles-known.json');

interface CruisedDependency { resolved: string; dependencyTypes: string[]; couldNotResolve: boolean }
interface CruisedModule { source: string; dependencies: CruisedDependency[] }

function cruise(): CruisedModule[] {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
  const out = execFileSync(bin, ['src', 'rest', 'resolvers', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  return (JSON.parse(out.toString('utf8')) as { modules: CruisedModule[] }).modules;
}

/** Folder -> folders it imports at run time, from a module's own folder to the imported module's own folder. */
export function folderEdges(modules: CruisedModule[]): Map<string, Set<string>> {
  const inScope = (p: string) => /^(src|rest|resolvers)\//.test(p);
  const edges = new Map<string, Set<string>>();
  for (const m of modules) {
    if (!inScope(m.source)) continue;
    const from = path.posix.dirname(m.source);
    for (const d of m.dependencies) {
      if (d.couldNotResolve || d.dependencyTypes.includes('type-only') || !d.dependencyTypes.includes('local')) continue;
      if (!inScope(d.resolved)) continue;
      const to = path.posix.dirname(d.resolved);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** Strongly connected groups of two or more folders (Tarjan). */
export function cycleGroups(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return groups.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The folder edges that hold the groups together, as "from -> to". */
export function cycleEdges(edges: Map<string, Set<string>>, groups: string[][]): string[] {
  const groupOf = new Map<string, number>();
  groups.forEach((g, i) => g.forEach((f) => groupOf.set(f, i)));
  const out: string[] = [];
  for (const [from, tos] of edges) {
    for (const to of tos) if (groupOf.has(from) && groupOf.get(from) === groupOf.get(to)) out.push(`${from} -> ${to}`);
  }
  return out.sort();
}

function main(): void {
  const edges = folderEdges(cruise());
  const groups = cycleGroups(edges);
  const current = cycleEdges(edges, groups);
  for (const g of groups) console.log(`cycle group: ${g.join(' ')}`);
  console.log(`${groups.length} folder cycles (groups), ${groups.reduce((n, g) => n + g.length, 0)} folders in them`);

  if (process.argv.includes('--update')) {
    fs.writeFileSync(KNOWN_FILE, `${JSON.stringify(current, null, 2)}\n`);
    console.log(`recorded ${current.length} cycle edges in ${path.basename(KNOWN_FILE)}`);
    return;
  }
  const known = new Set<string>(fs.existsSync(KNOWN_FILE) ? JSON.parse(fs.readFileSync(KNOWN_FILE, 'utf8')) : []);
  const fresh = current.filter((e) => !known.has(e));
  const gone = [...known].filter((e) => !current.includes(e));
  if (gone.length > 0) {
    console.log(`${gone.length} recorded cycle edges are gone: run \`npm run layers:baseline\` to shrink the record`);
  }
  if (fresh.length > 0) {
    console.error(`new folder cycle edges (an import that ties folders into a cycle):\n  ${fresh.join('\n  ')}`);
    process.exit(1);
  }
}

if (require.main === module) main();
