#!/usr/bin/env node
// The `docrelay` command: runs the TypeScript CLI through tsx, so a fresh clone needs no build step.

process.removeAllListeners('warning');
process.on('warning', (w) => {
  // The AWS SDK warns that it will want Node 22 from 2027; this tool supports Node 20 until then.
  if (w.name !== 'NodeVersionSupportWarning' && w.name !== 'ExperimentalWarning')
    process.stderr.write(`${w.stack}\n`);
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
