/**
 * `docrelay dev` (and `npm start`): the local stack in the foreground. Prints one line with `ready` and the
 * base URL once it takes webhooks, picks up config edits while it runs, and stops cleanly on Ctrl-C.
 */

import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readLocalSettings } from '../../functions/commons/env';
import { ConfigError } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import { displayPath, problemLines } from '../../local/stack/config-report';
import { startLocalStack } from '../../local/stack/local-stack';
import type { CommandContext } from './types';

/** What `docrelay dev` takes. */
export interface DevOptions {
  readonly quiet?: boolean;
  readonly jsonLogs?: boolean;
  readonly templates?: string;
}

/**
 * Runs the local stack until SIGINT or SIGTERM; resolves to the exit code: 1 for a broken config, or when the
 * AWS emulators' process ended.
 */
export async function dev(ctx: CommandContext, options: DevOptions): Promise<number> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const say = (text: string): void => {
    ctx.stdout.write(`${text}\n`);
  };
  const source = displayPath(settings.configPath, ctx.cwd);
  let config: Awaited<ReturnType<typeof loadConfigFile>>;
  try {
    config = await loadConfigFile(settings.configPath);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Every problem, located, as `docrelay check` prints them.
    for (const text of problemLines(source, error.problems)) ctx.stderr.write(`${text}\n`);
    ctx.stderr.write('docrelay dev: fix the config and start again (docrelay check --offline checks it)\n');
    return 1;
  }
  /** Resolves with the exit code: 0 on Ctrl-C or SIGTERM, 1 when the stack cannot go on. */
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const stack = await startLocalStack({
    settings,
    config,
    watchConfig: true,
    onFatal: (reason) => {
      ctx.stderr.write(
        `docrelay dev: ${reason}; stopping. Start it again: every open job resumes from ${settings.dataDir}\n`,
      );
      finish(1);
    },
    // The workers and the service emulator on a core of their own: webhooks are answered from an event loop
    // that renders no documents.
    workers: 'child',
    // Readable lines by default; with --json-logs the handlers' own structured logs instead.
    logLevel: options.jsonLogs === true ? 'INFO' : 'SILENT',
    ...(options.templates === undefined
      ? {}
      : { emulator: { templatesDir: resolve(ctx.cwd, options.templates) } }),
    ...(options.quiet === true || options.jsonLogs === true ? {} : { onLine: (text) => say(`  ${text}`) }),
  });
  say(`docrelay ready at ${stack.url}`);
  for (const text of readyLines(stack, settings, ctx.cwd)) say(text);
  const stop = (): void => finish(0);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const code = await finished;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  say('stopping...');
  await stack.stop();
  say('stopped');
  return code;
}

/** The lines under `ready`: where things are, and a first command for an integration the config has. */
export function readyLines(
  stack: {
    url: string;
    docgenUrl: string;
    docgen: 'embedded' | 'external';
    config: Awaited<ReturnType<typeof loadConfigFile>>;
  },
  settings: { dataDir: string; configPath: string },
  cwd: string,
): string[] {
  const integrations = stack.config.config.integrations;
  const webhook = integrations.find((integration) => integration.verify !== undefined);
  const example = webhook?.id ?? integrations[0]?.id ?? 'your-integration';
  const lines = [
    `  console:   ${stack.url}/`,
    `  webhooks:  POST ${stack.url}/v1/hooks/{integrationId}   (e.g. ${stack.url}/v1/hooks/${example})`,
    `  jobs:      GET  ${stack.url}/v1/jobs[/{jobId}]   GET ${stack.url}/v1/deliveries/{deliveryId}   (docrelay jobs list, docrelay tail)`,
    `  service:   ${stack.docgenUrl} (${stack.docgen === 'external' ? 'DOCGEN_BASE_URL' : 'embedded emulator'})`,
    `  data:      ${settings.dataDir}   config: ${displayPath(settings.configPath, cwd)} (edits are picked up)`,
  ];
  if (webhook !== undefined) {
    const sample = sampleFor(join(dirname(settings.configPath), 'samples'), webhook.id);
    const payload = sample === undefined ? '<file>' : displayPath(sample, cwd);
    lines.push(`  try:       npx docrelay send ${webhook.id} --payload ${payload} --wait`);
  } else if (integrations[0] !== undefined) {
    lines.push(`  try:       npx docrelay put-event ${integrations[0].id} --event <file>`);
  } else {
    lines.push('  try:       npx docrelay init my-hooks --scheme hmac-sha256');
  }
  return lines;
}

/**
 * A sample payload for the integration in the config's samples folder: the one `docrelay init` writes
 * (`<id>.json`), else one named after the id's first word (`github-releases`: `github-….json`).
 */
function sampleFor(dir: string, integrationId: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort();
  const first = integrationId.split(/[-_]/)[0] ?? integrationId;
  const name =
    files.find((file) => file === `${integrationId}.json`) ??
    files.find((file) => file.startsWith(`${first}-`));
  return name === undefined ? undefined : join(dir, name);
}
