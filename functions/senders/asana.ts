import { signBodyHmac, verifyBodyHmac } from './common/body-hmac';
import { stringsEqual } from './common/constant-time';
import { SignatureError } from './common/errors';
import { textAnswer } from './common/handshake';
import { readHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = { name: 'x-hook-signature', display: 'X-Hook-Signature', encoding: 'hex' } as const;
const HOOK_SECRET = 'x-hook-secret';

/** Values of the configured secret that mean "no X-Hook-Secret kept yet" (no window open). */
const PENDING = new Set(['', 'pending']);
const WINDOW_PREFIX = 'pending-until:';
/** The longest handshake window an operator may open, in minutes. */
export const ASANA_WINDOW_MAX_MINUTES = 60;

/** The secret value that opens a handshake window until `until` (`docrelay asana-handshake`). */
export const asanaWindowValue = (until: Date): string => `${WINDOW_PREFIX}${until.toISOString()}`;

/** The end of the window a secret value opens, or undefined when it opens none. */
function windowEnd(value: string): number | undefined {
  if (!value.startsWith(WINDOW_PREFIX)) return undefined;
  const end = Date.parse(value.slice(WINDOW_PREFIX.length));
  return Number.isFinite(end) ? end : undefined;
}

/** True while the window is open: not over, and not longer than the maximum (a hand-written value). */
const isOpen = (value: string, now: Date): boolean => {
  const end = windowEnd(value.trim());
  return end !== undefined && end > now.getTime() && end - now.getTime() <= ASANA_WINDOW_MAX_MINUTES * 60_000;
};

const holdsNoKey = (value: string): boolean =>
  PENDING.has(value.trim()) || windowEnd(value.trim()) !== undefined;

/**
 * Asana: `X-Hook-Signature`, hex HMAC-SHA256 of the raw body with the secret Asana's handshake handed over.
 * The handshake is trust on first use, so it is accepted only inside a window the operator opens (`docrelay
 * asana-handshake`) or when it presents the secret already kept. Delivery id: the body hash.
 */
export const asana: SenderScheme<'asana'> = {
  name: 'asana',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE.name, HOOK_SECRET],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,
  keepsHandedSecret: true,

  async handshake({ headers, secrets, now }, context) {
    const offered = readHeader(headers, HOOK_SECRET, 'X-Hook-Secret');
    if (offered === undefined) return undefined;
    let kept = secrets[0] ?? '';
    // A window opened moments ago may not be in a cached value yet.
    if (!isOpen(kept, now) && !stringsEqual(kept, offered)) kept = (await context.rereadSecrets())[0] ?? '';
    if (isOpen(kept, now)) await context.keepSecret(offered);
    else if (!stringsEqual(kept, offered)) {
      throw new SignatureError(
        'SIGNATURE_INVALID',
        holdsNoKey(kept)
          ? 'no handshake window is open for this integration: run docrelay asana-handshake <integration>, then create the webhook'
          : 'an X-Hook-Secret is already kept for this integration; open a window (docrelay asana-handshake) to accept a new one',
      );
    }
    return textAnswer('', { 'x-hook-secret': offered });
  },

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'asana').filter((secret) => !holdsNoKey(secret));
    if (keys.length === 0) {
      throw new SignatureError(
        'SIGNATURE_INVALID',
        'no X-Hook-Secret has been kept yet: the handshake comes first',
      );
    }
    verifyBodyHmac(SIGNATURE, headers, keys, rawBody);
    return { scheme: 'asana' };
  },

  sign(input) {
    return { [SIGNATURE.name]: signBodyHmac(SIGNATURE, signingSecret(input), input.rawBody) };
  },
};
