/**
 * `docrelay dev` (and `npm start`): the local stack in the foreground. Prints one line with `ready` and the
 * base URL once it takes webhooks; Ctrl-C stops everything cleanly.
 */
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../../functions/commons/env';
import { startLocalStack } from '../../local/stack/local-stack';
import { CliError, type CommandRun } from './types';

export const run: CommandRun = async (ctx) => {
  let values: { quiet?: boolean };
  try {
    ({ values } = parseArgs({ args: ctx.argv, options: { quiet: { type: 'boolean' } }, strict: true }));
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const say = (text: string): void => {
    ctx.stdout.write(`${text}\n`);
  };
  const stack = await startLocalStack({
    settings,
    ...(values.quiet ? {} : { onLine: (text) => say(`  ${text}`) }),
  });
  const example = stack.config.config.integrations[0]?.id ?? 'your-integration';
  say(`docrelay ready at ${stack.url}`);
  say(`  webhooks:  POST ${stack.url}/v1/hooks/{integrationId}   (e.g. ${stack.url}/v1/hooks/${example})`);
  say(`  console:   ${stack.url}/`);
  say(`  jobs:      GET  ${stack.url}/v1/jobs[/{jobId}]   GET ${stack.url}/v1/deliveries/{deliveryId}`);
  say(
    `  service:   ${stack.emulator === undefined ? `${stack.docgenUrl} (DOCGEN_BASE_URL)` : `${stack.docgenUrl} (embedded emulator)`}`,
  );
  say(`  data:      ${settings.dataDir}   config: ${settings.configPath}`);
  say(
    '  try:       npx docrelay send github-releases --payload config/samples/github-release-published.json',
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  say('stopping...');
  await stack.stop();
  say('stopped');
  return 0;
};
