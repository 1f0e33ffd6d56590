import { anyHmacMatches, hmacSha256 as hmacDigest } from './common/constant-time';
import { decodeBase64, decodeHex } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import { requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme, VerifyConfig } from './types';

/** The configured signature header as written (for messages); a config without one cannot work. */
function configuredHeader(config: VerifyConfig, refuse: (message: string) => Error): string {
  const display = config.header;
  if (typeof display !== 'string' || display.trim() === '') {
    throw refuse('verify scheme hmac-sha256 needs a header');
  }
  return display.trim();
}

/**
 * Generic HMAC-SHA256 of the raw body in a configured header, hex or base64, after an optional literal
 * prefix (e.g. `sha256=`) that the value must start with. No delivery id: the body hash is used.
 */
export const hmacSha256: SenderScheme<'hmac-sha256'> = {
  name: 'hmac-sha256',
  takesSecret: true,
  options: {
    header: { describe: 'header carrying the signature', required: 'the header carrying the signature' },
    encoding: { describe: 'signature encoding', default: 'hex' },
    prefix: { describe: 'text before the signature, e.g. "sha256="' },
  },
  // The configured header is the secret one; redactHeaders adds it from the config.
  secretHeaders: [],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets, config }) {
    const keys = requireSecrets(secrets, 'hmac-sha256');
    const display = configuredHeader(config, (message) => new VerifyConfigError(message));
    const encoding = config.encoding ?? 'hex';
    if (encoding !== 'hex' && encoding !== 'base64') {
      throw new VerifyConfigError('verify.encoding must be hex or base64');
    }
    const prefix = config.prefix ?? '';

    const header = requireHeader(headers, display.toLowerCase(), display);
    if (!header.startsWith(prefix)) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        `${display} header does not start with the configured prefix`,
      );
    }
    const encoded = header.slice(prefix.length);
    const signature = encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
    if (signature?.length !== 32) {
      throw new SignatureError('SIGNATURE_MALFORMED', `${display} header is not a ${encoding} HMAC-SHA256`);
    }
    if (!anyHmacMatches(keys, [rawBody], [signature])) {
      throw new SignatureError('SIGNATURE_INVALID', `${display} does not match the body`);
    }
    return { scheme: 'hmac-sha256' };
  },

  sign(input) {
    const { config } = input;
    const header = configuredHeader(config, (message) => new SigningError(message)).toLowerCase();
    const digest = hmacDigest(signingSecret(input), [input.rawBody]);
    return {
      [header]: `${config.prefix ?? ''}${digest.toString(config.encoding === 'base64' ? 'base64' : 'hex')}`,
    };
  },
};
