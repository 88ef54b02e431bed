/** Jest runs the TypeScript sources as native ESM (client-node 1.x and other deps are ESM-only). */
export default {
  preset: 'ts-jest/presets/default-esm',
  // onnxruntime-node checks `instanceof` on typed arrays; this environment shares the outer realm's (see the file).
  testEnvironment: '<rootDir>/services/lib/inference/onnx-test-environment.ts',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/.data/', '/dist/'],
  // The compiled build (npm run build) is not a second copy of the sources for jest.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  // One temporary folder per run (TMPDIR), removed at the end; onnxruntime's telemetry off in every worker.
  globalSetup: '<rootDir>/test/support/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/jest-global-teardown.ts',
  // Every answer an in-process app gives is checked against the app's OpenAPI document (see the file).
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-contract-setup.ts'],
  testTimeout: 120000,
  maxWorkers: 2,
};
