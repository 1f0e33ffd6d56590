/**
 * The synthesized functions' bundles, built as the construct builds them, each run in a process of its own
 * as a warm Lambda container: one `require` of the bundle, then one invocation per event sent, so the
 * second invocation runs on the clients (and their cached middleware) the first one built.
 */
import { type ChildProcessWithoutNullStreams, execSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import {
  type DocRelayFunctionName,
  docrelayBundling,
  esbuildBuildOptions,
  functionEntry,
} from '../../lib/docrelay-function';

/** Builds the functions' bundles for the construct's config file into `work/<name>`; resolves to the dirs. */
export async function buildBundles(
  configFile: string,
  names: readonly DocRelayFunctionName[],
  work: string,
): Promise<Map<DocRelayFunctionName, string>> {
  const bundling = docrelayBundling(configFile);
  const dirs = new Map<DocRelayFunctionName, string>();
  for (const name of names) {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    await build(esbuildBuildOptions(bundling, functionEntry(name), join(dir, 'index.js')));
    for (const command of bundling.commandHooks?.afterBundling(join(work, 'input'), dir) ?? []) {
      execSync(command, { stdio: 'pipe' });
    }
    dirs.set(name, dir);
  }
  return dirs;
}

/** What one invocation gave: the handler's answer or its error. */
export type Outcome = { resolved: unknown } | { rejected: { name: string; message: string } };

const MARK = '@@OUTCOME@@';

// Reads one event per stdin line, invokes the handler, prints its outcome on a marked line.
const RUNNER = `
const { createInterface } = require('node:readline');
const bundle = require(process.argv[1] + '/index.js');
const print = (outcome) => process.stdout.write('\\n${MARK}' + JSON.stringify(outcome) + '\\n');
let n = 0;
const lines = createInterface({ input: process.stdin });
let chain = Promise.resolve();
lines.on('line', (line) => {
  chain = chain.then(async () => {
    n += 1;
    const context = {
      callbackWaitsForEmptyEventLoop: true, functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
      functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':123456789012:function:' + process.env.AWS_LAMBDA_FUNCTION_NAME,
      memoryLimitInMB: '1024', awsRequestId: '00000000-0000-4000-8000-' + String(n).padStart(12, '0'),
      logGroupName: '/aws/lambda/x', logStreamName: 'x', getRemainingTimeInMillis: () => 60000,
    };
    try { print({ resolved: await bundle.handler(JSON.parse(line), context) }); }
    catch (error) { print({ rejected: { name: error.name, message: error.message } }); }
  });
});
`;

/** A warm container of one function. */
export interface LambdaContainer {
  invoke(event: unknown): Promise<Outcome>;
  /** Everything it printed besides the outcomes (its logs). */
  output(): string;
  stop(): Promise<void>;
}

/** How long one invocation may take (a generation against the local emulator takes well under this). */
const INVOKE_TIMEOUT_MS = 60_000;

/** Starts a container of the bundle in `dir` with exactly the environment `env`. */
export function startContainer(dir: string, env: Record<string, string>): LambdaContainer {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', RUNNER, dir], {
    cwd: dir,
    env,
  });
  let logs = '';
  const waiting: Array<(outcome: Outcome | Error) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith(MARK)) waiting.shift()?.(JSON.parse(line.slice(MARK.length)) as Outcome);
    else logs += `${line}\n`;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    logs += chunk.toString('utf8');
  });
  child.once('exit', (code) => {
    for (const waiter of waiting.splice(0)) waiter(new Error(`the container exited (${code}):\n${logs}`));
  });
  return {
    invoke: (event) =>
      new Promise<Outcome>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no answer within ${INVOKE_TIMEOUT_MS} ms:\n${logs}`)),
          INVOKE_TIMEOUT_MS,
        );
        waiting.push((outcome) => {
          clearTimeout(timer);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        });
        child.stdin.write(`${JSON.stringify(event)}\n`);
      }),
    output: () => logs,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin.end();
      child.kill('SIGTERM');
      await gone;
    },
  };
}
