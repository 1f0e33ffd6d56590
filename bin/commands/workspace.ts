/** `docrelay workspace [--json]`: the workspace the service API key belongs to. */
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../../functions/commons/env';
import { connectDocgenClient } from '../../local/service-connection';
import { CliError, type CommandRun } from './types';

/** Prints the workspace id and name (or the workspace as JSON). */
export const run: CommandRun = async (ctx) => {
  let json: boolean;
  try {
    const { values } = parseArgs({
      args: ctx.argv,
      options: { json: { type: 'boolean', default: false } },
      allowPositionals: false,
      strict: true,
    });
    json = values.json === true;
  } catch (error) {
    throw new CliError(
      `${error instanceof Error ? error.message : String(error)} (usage: docrelay workspace [--json])`,
      2,
    );
  }
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { client } = await connectDocgenClient(settings);
  const workspace = await client.getCurrentWorkspace();
  if (json) {
    ctx.stdout.write(`${JSON.stringify(workspace, null, 2)}\n`);
  } else {
    ctx.stdout.write(`id:   ${printable(workspace.id)}\nname: ${printable(workspace.displayName)}\n`);
  }
  return 0;
};

// Text from the service goes to a terminal: control characters could rewrite it.
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '?');
