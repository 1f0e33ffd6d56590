// The test tiers, each its own Jest project, run in this order by `npm test` (test/tiers.js):
// unit: one module at a time, in process; some start loopback servers (a fake service, the API server), no
//   other network. infra: CDK template assertions. e2e: the local stack over loopback HTTP against the
//   service emulator. aws: the synthesized bundles against moto_server (started by the tier on loopback).
//   soak: the two long e2e runs under faults and a crash, once per run, printing figures.
/** ESM-only packages that Jest (CommonJS) must transform. */
const esmPackages = ['@middy', 'fauxqs'];

const base = {
  testEnvironment: 'node',
  // fauxqs exports only an `import` entry; point Jest at it (the transform above makes it CommonJS).
  moduleNameMapper: { '^fauxqs$': '<rootDir>/node_modules/fauxqs/dist/app.js' },
  transform: {
    '^.+\\.(t|j|mj)s$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};

/** @type {import('jest').Config} */
module.exports = {
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...base, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/test/e2e/soak[^/]*\\.test\\.ts$'],
      slowTestThreshold: 30,
    },
    { ...base, displayName: 'soak', testMatch: ['<rootDir>/test/e2e/soak*.test.ts'], slowTestThreshold: 120 },
    // The synthesized bundles against moto_server (test/helpers/moto-server.ts starts it; CI has it on PATH).
    { ...base, displayName: 'aws', testMatch: ['<rootDir>/test/aws/**/*.test.ts'], slowTestThreshold: 60 },
  ],
};
