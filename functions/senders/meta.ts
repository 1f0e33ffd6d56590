import { signBodyHmac, verifyBodyHmac } from './common/body-hmac';
import { stringsEqual } from './common/constant-time';
import { SignatureError, VerifyConfigError } from './common/errors';
import { textAnswer } from './common/handshake';
import { requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = {
  name: 'x-hub-signature-256',
  display: 'X-Hub-Signature-256',
  encoding: 'hex',
  prefix: 'sha256=',
} as const;
const MAX_CHALLENGE = 512;

/**
 * Meta (Facebook, Instagram, WhatsApp): `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body with
 * the App Secret. The subscription GET is answered with `hub.challenge` when `hub.verify_token` matches the
 * secret named by `verifyTokenSecret`. Delivery id: the body hash.
 */
export const meta: SenderScheme<'meta'> = {
  name: 'meta',
  takesSecret: true,
  methods: ['GET', 'POST'],
  options: {
    verifyTokenSecret: {
      describe: 'NAME of the secret holding the verify token of the GET challenge',
      required: 'the secret holding the verify token you typed into the Meta app dashboard',
    },
  },
  secretHeaders: [SIGNATURE.name, 'x-hub-signature'],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  async handshake({ method, query, config }, context) {
    if (method !== 'GET') return undefined;
    if (config.verifyTokenSecret === undefined) {
      throw new VerifyConfigError('verify scheme meta needs verifyTokenSecret');
    }
    const token = Object.hasOwn(query, 'hub.verify_token') ? query['hub.verify_token'] : undefined;
    const challenge = Object.hasOwn(query, 'hub.challenge') ? query['hub.challenge'] : undefined;
    if (query['hub.mode'] !== 'subscribe' || token === undefined || challenge === undefined) {
      throw new SignatureError(
        'SIGNATURE_MISSING',
        'a GET needs hub.mode=subscribe, hub.verify_token and hub.challenge',
      );
    }
    if (challenge.length > MAX_CHALLENGE) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'hub.challenge is too long');
    }
    const expected = await context.secret(config.verifyTokenSecret);
    if (expected === '' || !stringsEqual(token, expected)) {
      throw new SignatureError('SIGNATURE_INVALID', 'hub.verify_token does not match');
    }
    return textAnswer(challenge);
  },

  verify({ rawBody, headers, secrets }) {
    verifyBodyHmac(SIGNATURE, headers, requireSecrets(secrets, 'meta'), rawBody);
    return { scheme: 'meta' };
  },

  sign(input) {
    return { [SIGNATURE.name]: signBodyHmac(SIGNATURE, signingSecret(input), input.rawBody) };
  },
};
