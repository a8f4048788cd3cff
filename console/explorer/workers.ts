/**
 * Monaco's web workers, bundled by console/build-explorer.ts as classic scripts under this origin's
 * /console/explorer/assets (the page's worker-src 'self'): the names carry content hashes the build defines here.
 */
declare const EXPLORER_WORKERS: { editor: string; json: string; graphql: string };

(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_id: string, label: string): Worker {
    const file = label === 'json' ? EXPLORER_WORKERS.json : label === 'graphql' ? EXPLORER_WORKERS.graphql : EXPLORER_WORKERS.editor;
    return new Worker(`/console/explorer/assets/${file}`, { name: label });
  },
};
