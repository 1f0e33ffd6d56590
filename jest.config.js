// Four tiers, each its own Jest project: unit (no network), infra (CDK template assertions),
// e2e (the local stack over real HTTP against the service emulator), aws (the synthesized bundles against moto).
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
  // A server a failed test left listening must not hold the run open after its summary (CI once waited
  // out its whole time limit on one). Jest still names the leak ("Force exiting Jest…").
  forceExit: true,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...base, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], slowTestThreshold: 30 },
    // The synthesized bundles against moto_server (test/aws/moto-server.ts starts it; CI has it on PATH).
    { ...base, displayName: 'aws', testMatch: ['<rootDir>/test/aws/**/*.test.ts'], slowTestThreshold: 60 },
  ],
};
