#!/usr/bin/env node
// The `docrelay` command: runs the TypeScript CLI through tsx, so a fresh clone needs no build step.

process.removeAllListeners('warning');
process.on('warning', (warning) => {
  // The AWS SDK warns that its 2027 releases will want Node 22; this tool supports Node 20 until then.
  const text = `${warning.name}: ${warning.message}`;
  if (!text.includes('NodeVersionSupportWarning') && warning.name !== 'ExperimentalWarning') {
    process.stderr.write(`${text}\n`);
  }
});
// The package others install holds the CDK construct (dist/) and the functions' sources, not the CLI's.
if (!require('node:fs').existsSync(require('node:path').join(__dirname, 'docrelay.ts'))) {
  process.stderr.write(
    'docrelay: the CLI runs from a clone of the repository (npm ci, then npx docrelay ...)\n',
  );
  process.exit(1);
}
require('tsx/cjs');
const { main } = require('./docrelay.ts');
main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
})
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error) => {
    process.stderr.write(`docrelay: ${error?.message ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
