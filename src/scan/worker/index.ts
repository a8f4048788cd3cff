export { ScanWorkers, WorkerStartError, type IsolationOptions } from './analyze-in-worker';
