/**
 * The `v0=` family (Slack, Zoom): `v0=<hex HMAC-SHA256>` over `v0:${timestamp}:${raw body}` in one header,
 * the timestamp in another, within the tolerance both ways. A preset is its header names and its handshake.
 */
import type {
  DeliveryIdSource,
  HandshakeAnswer,
  HandshakeRequest,
  SenderScheme,
  VerifiedDelivery,
  VerifyInput,
} from '../types';
import { anyHmacMatches, hmacSha256 } from './constant-time';
import { decodeHex } from './encoding';
import { SignatureError } from './errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './headers';
import { hexDevSecret, signingSecret, unixSeconds } from './signing';

const PREFIX = 'v0=';

/** A header: lower-case name and its documented spelling. */
interface NamedHeader {
  readonly header: string;
  readonly display: string;
}

/** What a `v0=` sender is. */
export interface V0Sender<Name extends string> {
  readonly name: Name;
  readonly signature: NamedHeader;
  readonly timestamp: NamedHeader;
  readonly secretValuePrefixes?: readonly string[];
  readonly deliveryId?: DeliveryIdSource;
  /** The sender's challenge, given the scheme's verify (a challenge is verified like any delivery). */
  readonly handshake?: (
    request: HandshakeRequest,
    verify: (input: VerifyInput) => VerifiedDelivery,
  ) => HandshakeAnswer | undefined;
}

/** A sender scheme of the `v0=` family. */
export function v0Scheme<Name extends string>(sender: V0Sender<Name>): SenderScheme<Name> {
  const { name, signature, timestamp } = sender;
  const verify = ({ rawBody, headers, secrets, config, now }: VerifyInput): VerifiedDelivery => {
    const keys = requireSecrets(secrets, name);
    const tolerance = toleranceOf(config.toleranceSeconds);
    const header = requireHeader(headers, signature.header, signature.display);
    const t = requireHeader(headers, timestamp.header, timestamp.display);
    const seconds = parseUnixSeconds(t, timestamp.display);
    const presented = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : undefined;
    if (presented?.length !== 32) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        `${signature.display} header is not v0=<64 hex digits>`,
      );
    }
    if (!anyHmacMatches(keys, ['v0:', t, ':', rawBody], [presented])) {
      throw new SignatureError('SIGNATURE_INVALID', `${signature.display} does not match the body`);
    }
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: name, timestamp: new Date(seconds * 1000) };
  };
  const { handshake } = sender;
  return {
    name,
    takesSecret: true,
    options: { toleranceSeconds: toleranceOption() },
    secretHeaders: [signature.header],
    secretValuePrefixes: sender.secretValuePrefixes ?? [],
    ...(sender.deliveryId === undefined ? {} : { deliveryId: sender.deliveryId }),
    devSecret: hexDevSecret,
    ...(handshake === undefined
      ? {}
      : { handshake: (request: HandshakeRequest) => handshake(request, verify) }),
    verify,
    sign(input) {
      const t = unixSeconds(input.now);
      const mac = hmacSha256(signingSecret(input), ['v0:', t, ':', input.rawBody]).toString('hex');
      return { [timestamp.header]: t, [signature.header]: `${PREFIX}${mac}` };
    },
  };
}
