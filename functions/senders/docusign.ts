import { assertHmacMatches, decodeHmac, formatHmac, type HmacFormat } from './common/body-hmac';
import { SignatureError } from './common/errors';
import { readHeader, requireSecrets } from './common/headers';
import { signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'base64' };
const HEADER_PREFIX = 'x-docusign-signature-';
/** DocuSign Connect allows up to 100 HMAC keys per account, one signature header per active key. */
const MAX_KEYS = 100;

/**
 * DocuSign Connect (HMAC security): one `X-DocuSign-Signature-<n>` header per active Connect key, each the
 * base64 HMAC-SHA256 of the raw body (JSON or XML); any one matching any configured key is enough, which is
 * how a key rotates. No timestamp and no delivery id header: the body hash is the default id.
 */
export const docusign: SenderScheme<'docusign'> = {
  name: 'docusign',
  takesSecret: true,
  options: {},
  secretHeaders: Array.from({ length: MAX_KEYS }, (_, index) => `${HEADER_PREFIX}${index + 1}`),
  secretValuePrefixes: [],

  devSecret: (random) => random.toString('base64'),

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'docusign');
    const signatures: Buffer[] = [];
    let present = 0;
    for (let index = 1; index <= MAX_KEYS; index += 1) {
      const display = `X-DocuSign-Signature-${index}`;
      const value = readHeader(headers, `${HEADER_PREFIX}${index}`, display);
      if (value === undefined) continue;
      present += 1;
      // An undecodable signature cannot match; another key's may.
      const signature = decodeHmac(value, FORMAT);
      if (signature !== undefined) signatures.push(signature);
    }
    if (present === 0) throw new SignatureError('SIGNATURE_MISSING', 'missing X-DocuSign-Signature-1 header');
    assertHmacMatches(keys, [rawBody], signatures, FORMAT.algorithm, 'X-DocuSign-Signature-<n>');
    return { scheme: 'docusign' };
  },

  sign(input) {
    return { [`${HEADER_PREFIX}1`]: formatHmac(signingSecret(input), [input.rawBody], FORMAT) };
  },
};
