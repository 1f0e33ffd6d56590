/**
 * A local stack in a process of its own, for tests that kill it: `node --import tsx stack-host.ts '<options>'`
 * starts `startTestStack` with the JSON options given (TestStackOptions that survive JSON), prints
 * `ready <url>` once it takes webhooks, and runs until it is killed. See ./hosted-stack.ts.
 */
import { startTestStack, type TestStackOptions } from './stack';

const options = JSON.parse(process.argv[2] ?? '{}') as TestStackOptions;
startTestStack(options).then(
  (t) => process.stdout.write(`ready ${t.url}\n`),
  (error: unknown) => {
    process.stderr.write(`stack-host: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
