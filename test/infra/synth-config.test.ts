/** The configuration at synth: validated with located messages, and bundled into every function as JSON. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Template } from 'aws-cdk-lib/assertions';
import { ConfigError } from '../../functions/config/errors';
import { parseConfig } from '../../functions/config/load';
import { runtimeConfig } from '../../lib/builders/secrets';
import { addDocRelayStack } from '../../lib/docrelay-app';
import { BUNDLED_CONFIG_FILE, besideBundleCommands, docrelayBundling } from '../../lib/docrelay-function';
import { FIXTURE_CONFIG, fixtureConfig, ROOT, synthStack, testApp } from './support';

const run = promisify(execFile);
const BROKEN = 'test/infra/fixtures/broken-docrelay.yaml';

/** Runs a command in the repository; resolves to its exit code and output, whatever the code. */
async function exec(command: string, args: string[], env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the configuration at synth', () => {
  test('config/docrelay.yaml, the default of `cdk synth`, synthesizes', () => {
    const stack = addDocRelayStack(testApp(), { cwd: ROOT });
    Template.fromStack(stack).resourceCountIs('AWS::ApiGatewayV2::Api', 1);
  });

  test('a broken config fails before any construct exists, with every problem located', () => {
    const app = testApp();
    let thrown: unknown;
    try {
      addDocRelayStack(app, { cwd: ROOT, configPath: BROKEN });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toContain(
      `service.maxConcurrency: must be at least 1 (${BROKEN}:4:19)`,
    );
    expect(app.node.children).toHaveLength(0);
  });

  test('`cdk synth` on a broken config exits 1 with exactly the lines of `docrelay check --offline`', async () => {
    const [synth, check] = await Promise.all([
      exec(process.execPath, ['-r', 'tsx/cjs', 'bin/app.ts'], {
        CDK_CONTEXT_JSON: JSON.stringify({ config: BROKEN }),
        CDK_OUTDIR: join(testApp().outdir),
      }),
      exec(process.execPath, ['bin/docrelay.js', 'check', '--offline'], { DOCRELAY_CONFIG: BROKEN }),
    ]);
    expect(synth.code).toBe(1);
    expect(check.code).toBe(1);
    const problems = (text: string) => text.split('\n').filter((line) => line.startsWith('  - '));
    expect(problems(synth.stderr)).toHaveLength(4);
    expect(problems(synth.stderr)).toEqual(problems(check.stderr));
    expect(synth.stderr).toContain(`${BROKEN}: 4 problems`);
    // The user's problem, not a crash: no stack trace.
    expect(synth.stderr).not.toMatch(/^\s+at /m);
    // Two node processes compiling TypeScript through tsx: seconds each on a loaded machine.
  }, 120_000);

  test('the construct validates a config given in code too', () => {
    const config = fixtureConfig();
    const broken = { ...config, storage: { keyPattern: '{integration}/{filename}' } };
    expect(() => synthStack({}, broken)).toThrow(/storage.keyPattern: must contain \{jobId\}/);
  });

  test('the validated config is written as JSON that loads back to the same config, and copied into the asset', () => {
    const { stack } = synthStack();
    const relay = stack.docRelay;
    const written = readFileSync(relay.configFile, 'utf8');
    // The same config, each secret named by the name the functions read it under (the deployment's prefix).
    expect(parseConfig(written, 'bundled').config).toEqual(runtimeConfig(relay.config, relay.secretNames));
    expect(relay.secretNames.get('test/stripe-webhook')).toBe('Test/test/stripe-webhook');
    expect(relay.config).toEqual(parseConfig(readFileSync(FIXTURE_CONFIG, 'utf8'), 'fixture').config);
    // Copied beside the bundle after esbuild ran: never through the 4 KB environment.
    const hooks = docrelayBundling(relay.configFile).commandHooks!;
    const commands = hooks.afterBundling('/in', '/asset out');
    expect(commands[0]).toBe(`cp '${relay.configFile}' '/asset out/${BUNDLED_CONFIG_FILE}'`);
    // Then the files built beside the bundle: the modules loaded on some requests only, and the mapping
    // isolate's own bundle (test/infra/bundle-smoke.test.ts loads both).
    expect(commands.slice(1)).toEqual(besideBundleCommands('/asset out'));
    expect(commands).toHaveLength(3);
  });
});
