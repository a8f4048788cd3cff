/** console/build.ts turns each operation file into this (the text only while the manifest lacks it). */
declare module '*.graphql' {
  const operation: { operationName: string; sha256Hash: string; query?: string };
  export default operation;
}
