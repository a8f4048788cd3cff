// Two projects so that `jest test/unit` starts no server: Jest runs a project's global setup only when the run
// selects tests of that project. Everything under test/ that is not a unit test gets the real servers.
/** @type {import('jest').Config['transform']} */
const transform = {
  // Transpile only (isolatedModules): `tsc --noEmit` is the type check, and checking per test file in every
  // worker would cost minutes.
  '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }],
  // jose 6 ships ES modules only. Node 20.19+ loads them through require (the service needs nothing), but Jest's
  // module system does not: its files are transpiled to CommonJS like ours.
  '/node_modules/jose/.+\\.js$': ['ts-jest', { tsconfig: { isolatedModules: true, allowJs: true } }],
};
/** Everything in node_modules is used as is, except jose (see transform). */
const transformIgnorePatterns = ['/node_modules/(?!jose/)'];

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/'],
      globalSetup: '<rootDir>/test/bed/global-setup.ts',
      globalTeardown: '<rootDir>/test/bed/global-teardown.ts',
    },
  ],
};
