/**
 * `docrelay asana-handshake <integrationId> [--minutes <n>]`: opens the window in which the integration keeps
 * the X-Hook-Secret of Asana's handshake (trust on first use, so only while the operator expects it). It
 * writes the window's end into the integration's secret: Secrets Manager on AWS, the local secrets file else.
 */

import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { SecretsManagerSource } from '../../functions/adapters/secrets-manager/secret-source';
import { readLocalSettings } from '../../functions/commons/env';
import { ASANA_WINDOW_MAX_MINUTES, asanaWindowValue } from '../../functions/senders/asana';
import { findIntegration, loadConfigOrExplain } from './ops-args';
import { AWS_TARGET_VARIABLES, resolveStackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** The window's length in minutes, 1 to ASANA_WINDOW_MAX_MINUTES. @default 10 */
export function windowMinutes(text: string | undefined): number {
  const minutes = text === undefined ? 10 : Number(text);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > ASANA_WINDOW_MAX_MINUTES) {
    throw new CliError(`--minutes must be a whole number from 1 to ${ASANA_WINDOW_MAX_MINUTES}`, 2);
  }
  return minutes;
}

/** Opens the handshake window; resolves to the exit code. */
export async function asanaHandshake(
  ctx: CommandContext,
  integrationId: string,
  options: { minutes?: string },
  now: () => Date = () => new Date(),
): Promise<number> {
  const minutes = windowMinutes(options.minutes);
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const integration = findIntegration(await loadConfigOrExplain(settings.configPath), integrationId);
  const verify = integration.config.verify;
  if (verify?.scheme !== 'asana') {
    throw new CliError(`integration ${integrationId} does not verify with scheme asana`);
  }
  const name = Array.isArray(verify.secret) ? verify.secret[0] : verify.secret;
  if (name === undefined) throw new CliError(`integration ${integrationId} names no secret`);
  const until = new Date(now().getTime() + minutes * 60_000);
  const value = asanaWindowValue(until);
  // On AWS when the stack's variables are set (as every operational command); locally the secrets file,
  // which the running stack reads again when the handshake comes.
  if (AWS_TARGET_VARIABLES.some((variable) => (ctx.env[variable] ?? '').trim() !== '')) {
    const target = await resolveStackTarget(ctx);
    try {
      await new SecretsManagerSource(target.clients.secretsManager).put(name, value);
    } finally {
      target.close();
    }
  } else {
    await new FileSecretSource(settings.secretsFile).put(name, value);
  }
  ctx.stdout.write(
    `handshake window for ${integrationId} open until ${until.toISOString()}: create the Asana webhook now (the first X-Hook-Secret is kept, then the window closes)\n`,
  );
  return 0;
}
