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
