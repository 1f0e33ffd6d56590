/**
 * `docrelay workspace [--json]`: the workspace the service API key belongs to, from the service `check` and
 * `map` use (service-target.ts).
 */
import { readLocalSettings } from '../../functions/commons/env';
import { callService, connectConfiguredService } from './service-target';
import type { CommandContext } from './types';

/** Prints the workspace id and name (or the workspace as JSON). */
export async function workspace(ctx: CommandContext, options: { json?: boolean }): Promise<number> {
  const json = options.json === true;
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { client, connection } = await connectConfiguredService(settings);
  const workspace = await callService(connection, settings, () => client.getCurrentWorkspace());
  if (json) {
    ctx.stdout.write(`${JSON.stringify(workspace, null, 2)}\n`);
  } else {
    ctx.stdout.write(`id:   ${printable(workspace.id)}\nname: ${printable(workspace.displayName)}\n`);
  }
  return 0;
}

// Text from the service goes to a terminal: control characters could rewrite it.
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '?');
