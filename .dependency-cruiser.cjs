// The layer check (CONTRIBUTING.md, "Layer check"): runtime imports point down only,
//   rest/ -> resolvers/ -> src/services -> src/data,
// src/http is plumbing both transports import and that imports neither, and no folder imports itself back through
// others. `import type` is left out: types may point anywhere, they vanish when compiled (an import of types only says
// `import type`, or it counts). Folder cycles are found by scripts/folder-cycles.ts over this tool's graph.
// `npm run check` runs it with --ignore-known: the violations recorded in .dependency-cruiser-known-violations.json
// are tolerated while they are untied, any new one fails. The record only shrinks: after removing a violation, run
// `npm run layers:baseline`.
// dependency-cruiser is pinned at 17.4.3: see there why.
const runtime = { dependencyTypesNot: ['type-only'] };
const down = (name, from, to, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to, ...runtime },
});

module.exports = {
  forbidden: [
    down('data-imports-up', '^src/data/', '^(src/services|resolvers|rest)/', 'src/data is the lowest layer: repositories know no service, resolver or REST code'),
    down('services-import-up', '^src/services/', '^(resolvers|rest)/', 'services serve both transports and import neither'),
    down('resolvers-import-rest', '^resolvers/', '^rest/', 'the REST facade sits on GraphQL, never the other way round'),
    down('http-imports-up', '^src/http/', '^(rest|resolvers|src/services)/', 'src/http is plumbing both transports import; it imports neither'),
    {
      name: 'no-module-cycle',
      comment: 'a module must not import itself back through others (folder cycles: scripts/folder-cycles.ts)',
      severity: 'error',
      from: { path: '^(src|rest|resolvers)/' },
      to: { circular: true, ...runtime, viaOnly: runtime },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|generated)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
