/** console/build.ts turns each operation file into this; `registered`: the trusted-documents manifest lists it. */
declare module '*.graphql' {
  const operation: { operationName: string; sha256Hash: string; query: string; registered: boolean };
  export default operation;
}
