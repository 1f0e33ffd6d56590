import type { SignInput } from '../types';
import { SigningError, VerifyConfigError } from './errors';

/** The secret that signs: the first configured one (during a rotation the new secret is listed first). */
export function signingSecret(input: SignInput): string {
  const first = input.secrets[0];
  if (first === undefined || first === '') {
    throw new SigningError(`verify scheme ${input.config.scheme} needs a secret to sign with`);
  }
  return first;
}

/** A Unix time in whole seconds, as timestamped senders write it. */
export const unixSeconds = (now: Date): string => String(Math.floor(now.getTime() / 1000));

/** A development secret of a scheme whose secrets are arbitrary text: `dev_` and hex. */
export const hexDevSecret = (random: Buffer): string => `dev_${random.toString('hex')}`;

/** The public URL a URL-signing scheme verifies against; without one the integration cannot verify. */
export function requireUrl(url: string | undefined, scheme: string): string {
  if (typeof url !== 'string' || url === '') {
    throw new VerifyConfigError(`verify scheme ${scheme} signs the URL: the public URL is not known`);
  }
  return url;
}

/** The URL to sign for (`docrelay send`), for the schemes that sign the URL. */
export function signingUrl(input: SignInput): string {
  if (input.url === undefined || input.url === '') {
    throw new SigningError(`verify scheme ${input.config.scheme} signs the URL: give the URL to sign for`);
  }
  return input.url;
}
