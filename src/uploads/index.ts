export * from './upload-token';
export * from '../data/upload-locks-repo';
export * from './verifying-stream';
export * from './stream-to-store';
export * from './upload-budget';
