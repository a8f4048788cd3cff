// Protects: no dangling citations. Every document a tracked source, test, script, console or client file cites
// (`docs/contract.md`, `README.md`, `client/README.md`, ...) exists in the repository, and so does the section it names
// (`docs/x.md#anchor`, or `docs/x.md, "Heading"`); every relative link of a tracked Markdown page resolves likewise.
// A clone must stand alone: a citation of a document kept elsewhere is a dead end for whoever reads the code.
// Likewise every repository path a page names in backticks (`src/jobs/scan-job.ts`, `tools/ferretdb/`) exists, so
// docs/, the README and CONTRIBUTING cannot keep naming a file after it moved.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

/** Files whose comments and strings are read: code, scripts and configuration, not generated output. */
const SOURCE = /\.(ts|tsx|js|mjs|cjs|graphql|ya?ml|sh|go|json)$|(^|\/)(Dockerfile|run)$/;
const GENERATED = /^(src\/generated\/|action\/dist\/)|(^|\/)package-lock\.json$/;
/** This file: its citations are the made-up examples the scan must refuse. */
const SELF = path.relative(root, __filename).split(path.sep).join('/');

/** A cited document: a path ending in `.md`, then an optional `#anchor` or `, "Heading"`. */
const CITATION = /(?<![\w/.@-])((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w.-]+\.md)(?:#([\w-]+)|,? "([^"\n]+)")?/g;
/** Outside comments only names that cannot be a file a program writes (`summary.md`): under docs/, or in capitals. */
const CODE_CITATION = /^(?:\.{0,2}\/)?(?:docs\/|(?:[\w-]+\/)*[A-Z][A-Z_-]*\.md$)/;

interface Citation {
  file: string;
  line: number;
  target: string;
  anchor?: string;
  heading?: string;
}

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((file) => file && existsSync(path.join(root, file)));
}

/** The comment text of one line: after `//` or `#` that start a comment, or inside a block comment. */
function commentOf(line: string, inBlock: boolean): string {
  if (inBlock || /^\s*(\*|\/\*)/.test(line)) return line;
  const match = /(?:^|\s)(?:\/\/|#)(.*)$/.exec(line);
  return match ? match[1] : '';
}

/** Citations of `.md` documents in a source file: any in comments, in code only those CODE_CITATION admits. */
function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  let inBlock = false;
  text.split('\n').forEach((line, index) => {
    const comment = commentOf(line, inBlock);
    if (line.includes('/*')) inBlock = !line.slice(line.lastIndexOf('/*')).includes('*/');
    else if (inBlock && line.includes('*/')) inBlock = false;
    for (const match of line.matchAll(CITATION)) {
      const inComment = comment.includes(match[0]);
      if (!inComment && !CODE_CITATION.test(match[1])) continue;
      found.push({ file, line: index + 1, target: match[1], anchor: match[2], heading: match[3] });
    }
  });
  return found;
}

/** Relative links of a Markdown page, `[text](target#anchor)`, outside code blocks. */
function linksIn(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target, anchor] = match[1].split('#');
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      found.push({ file, line: index + 1, target: target || path.basename(file), anchor });
    }
  });
  return found;
}

/** The headings of a Markdown page, as text and as GitHub's anchors (duplicates numbered as GitHub numbers them). */
function headingsOf(markdown: string): { texts: Set<string>; anchors: Set<string> } {
  const texts = new Set<string>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const text = match[1].replace(/`/g, '');
    texts.add(text.toLowerCase());
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return { texts, anchors };
}

/** What is wrong with one citation, or null: the file is looked for from the repository's root, then beside the citer. */
function problemOf(citation: Citation, read: (file: string) => string | null): string | null {
  const candidates = [citation.target, path.join(path.dirname(citation.file), citation.target)].map((p) => path.normalize(p));
  const target = candidates.find((candidate) => read(candidate) !== null);
  const where = `${citation.file}:${citation.line} cites ${citation.target}`;
  if (target === undefined) return `${where}, which the repository lacks`;
  if (!target.endsWith('.md') || (!citation.anchor && !citation.heading)) return null;
  const { texts, anchors } = headingsOf(read(target)!);
  if (citation.anchor && !anchors.has(citation.anchor.toLowerCase())) return `${where}#${citation.anchor}: no such section`;
  if (citation.heading && !texts.has(citation.heading.replace(/`/g, '').toLowerCase())) return `${where}, "${citation.heading}": no such section`;
  return null;
}

function readFromRepo(tracked: Set<string>): (file: string) => string | null {
  return (file) => {
    if (tracked.has(file)) return readFileSync(path.join(root, file), 'utf8');
    // a folder, such as `action/` in a link
    return [...tracked].some((t) => t.startsWith(`${file.replace(/\/$/, '')}/`)) ? '' : null;
  };
}

/** Paths the tests and tools write, ignored by git, that pages may name. */
const WRITTEN_PATHS = ['test/artifacts/'];
/** Pages whose backticked paths are checked: the ones a newcomer reads. */
const PAGES = /^(docs\/.*|README|CONTRIBUTING|client\/README)\.md$/;

/**
 * Repository paths a page names in backticks: a token with a slash whose first segment is a top-level folder of the
 * repository, without a `:line`, `#anchor` or trailing punctuation; patterns and placeholders (`*`, `<name>`) are not
 * paths.
 */
function pathsIn(file: string, text: string, tops: Set<string>): Citation[] {
  const found: Citation[] = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/`([^`\s]+)`/g)) {
      const target = match[1].replace(/[:#].*$/, '').replace(/[.,;]+$/, '');
      if (!target.includes('/') || /[*<>{}$]/.test(target) || !tops.has(target.split('/')[0])) continue;
      found.push({ file, line: index + 1, target });
    }
  });
  return found;
}

function pathProblem(citation: Citation, tracked: Set<string>): string | null {
  const target = citation.target.replace(/\/$/, '');
  if (tracked.has(target) || WRITTEN_PATHS.some((w) => citation.target.startsWith(w))) return null;
  if ([...tracked].some((t) => t.startsWith(`${target}/`))) return null;
  return `${citation.file}:${citation.line} names \`${citation.target}\`, which the repository lacks`;
}

describe('citations of documents', () => {
  const files = trackedFiles();
  const read = readFromRepo(new Set(files));

  it('every document a source, test, script, console or client file cites exists, with the section it names', () => {
    const sources = files.filter((file) => SOURCE.test(file) && !GENERATED.test(file) && file !== SELF);
    const citations = sources.flatMap((file) => citationsIn(file, readFileSync(path.join(root, file), 'utf8')));
    expect(citations.length).toBeGreaterThan(20); // the scan reads what it should (docs/contract.md alone is cited more)
    expect(citations.map((c) => problemOf(c, read)).filter(Boolean)).toEqual([]);
  });

  it('every relative link of a Markdown page resolves, anchor included', () => {
    const pages = files.filter((file) => file.endsWith('.md'));
    const links = pages.flatMap((file) => linksIn(file, readFileSync(path.join(root, file), 'utf8')));
    expect(links.length).toBeGreaterThan(20);
    expect(links.map((c) => problemOf(c, read)).filter(Boolean)).toEqual([]);
  });

  it('fails on a document or a section the repository lacks, and passes the forms it accepts', () => {
    const text = [
      '// see CONTRACT.md, Rate limits',
      ' * the operator CLI (docs/contract.md, "No such heading")',
      '# Debian tools (docs/architecture.md#no-such-anchor)',
      "const out = path.join(dir, 'summary.md'); // a file the code writes, not a citation",
      "throw new Error('see docs/missing.md');",
      '/** Rate limits (docs/contract.md, "Rate limits"), the layers (docs/architecture.md#layers). */',
    ].join('\n');
    const problems = citationsIn('src/planted.ts', text).map((c) => problemOf(c, read));
    expect(problems).toEqual([
      'src/planted.ts:1 cites CONTRACT.md, which the repository lacks',
      'src/planted.ts:2 cites docs/contract.md, "No such heading": no such section',
      'src/planted.ts:3 cites docs/architecture.md#no-such-anchor: no such section',
      'src/planted.ts:5 cites docs/missing.md, which the repository lacks',
      null,
      null,
    ]);
  });

  it('every repository path a page names in backticks exists', () => {
    const tracked = new Set(files);
    const tops = new Set(files.filter((f) => f.includes('/')).map((f) => f.split('/')[0]));
    const named = files.filter((file) => PAGES.test(file)).flatMap((file) => pathsIn(file, readFileSync(path.join(root, file), 'utf8'), tops));
    expect(named.length).toBeGreaterThan(100); // the pages name many files; a scan that finds none reads nothing
    expect(named.map((c) => pathProblem(c, tracked)).filter(Boolean)).toEqual([]);
  });

  it('fails on a backticked path the repository lacks, and skips what is no path', () => {
    const tracked = new Set(files);
    const tops = new Set(['src', 'docs', 'test']);
    const text = 'See `src/services/gone.ts` and `src/jobs/scan-job.ts:42`, `docs/`, `test/artifacts/x.png`, `src/*.ts`, `rest/<Name>.graphql`, `a/b`.';
    expect(pathsIn('docs/planted.md', text, tops).map((c) => pathProblem(c, tracked))).toEqual([
      'docs/planted.md:1 names `src/services/gone.ts`, which the repository lacks',
      null,
      null,
      null,
    ]);
  });

  it("computes GitHub's anchors", () => {
    const { anchors } = headingsOf('# Metrics: `GET /metrics`\n```\n# not a heading\n```\n## A, b (c)\n## A, b (c)\n');
    expect([...anchors]).toEqual(['metrics-get-metrics', 'a-b-c', 'a-b-c-1']);
  });
});
