import { sign as signBytes, verify as verifySignature } from 'node:crypto';
import { decodeBase64 } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import { jsonAnswer, jsonObjectOf } from './common/handshake';
import { assertWithinTolerance, requireSecrets, toleranceOf, toleranceOption } from './common/headers';
import { privateKeyOf, publicKeyOf } from './common/public-key';
import { isSnsUrl } from './sns-hosts';
import type { HandshakeContext, SenderScheme, VerifyInput } from './types';

/** The fields each message type signs, in the order SNS documents. */
const SIGNED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

export { isSnsUrl } from './sns-hosts';

/** The text SNS signs: `name\nvalue\n` for each signed field present, in order. */
export function snsStringToSign(message: Readonly<Record<string, unknown>>): string {
  const fields = SIGNED_FIELDS[String(message.Type)];
  if (fields === undefined) throw new SignatureError('SIGNATURE_MALFORMED', 'not an SNS message type');
  let text = '';
  for (const field of fields) {
    const value = message[field];
    if (value === undefined && field === 'Subject') continue;
    if (typeof value !== 'string')
      throw new SignatureError('SIGNATURE_MALFORMED', `SNS message without ${field}`);
    text += `${field}\n${value}\n`;
  }
  return text;
}

function verifySns({ rawBody, secrets, config, now }: VerifyInput) {
  const keys = requireSecrets(secrets, 'sns').map((secret) => publicKeyOf(secret, 'sns'));
  if (config.topicArn === undefined) throw new VerifyConfigError('verify scheme sns needs topicArn');
  const tolerance = toleranceOf(config.toleranceSeconds, 3600);
  const message = jsonObjectOf(rawBody);
  if (message === undefined) throw new SignatureError('SIGNATURE_MISSING', 'the body is not an SNS message');
  const algorithm =
    message.SignatureVersion === '1' ? 'sha1' : message.SignatureVersion === '2' ? 'sha256' : undefined;
  if (algorithm === undefined)
    throw new SignatureError('SIGNATURE_MALFORMED', 'SignatureVersion is not 1 or 2');
  if (algorithm === 'sha1' && config.minSignatureVersion === 2) {
    throw new SignatureError(
      'SIGNATURE_INVALID',
      'SignatureVersion 1 (SHA1) is refused: minSignatureVersion is 2',
    );
  }
  if (!isSnsUrl(message.SigningCertURL)) {
    throw new SignatureError(
      'SIGNATURE_INVALID',
      'SigningCertURL is not an https sns.<region>.amazonaws.com(.cn) URL',
    );
  }
  const signature = typeof message.Signature === 'string' ? decodeBase64(message.Signature) : undefined;
  if (signature === undefined)
    throw new SignatureError('SIGNATURE_MISSING', 'SNS message without a Signature');
  const signed = Buffer.from(snsStringToSign(message), 'utf8');
  if (!keys.some((key) => verifySignature(algorithm, signed, key, signature))) {
    throw new SignatureError('SIGNATURE_INVALID', 'the SNS Signature does not match the message');
  }
  // Only now, signed: the topic and the time.
  if (message.TopicArn !== config.topicArn) {
    throw new SignatureError('SIGNATURE_INVALID', 'the message is from another topic than verify.topicArn');
  }
  const at = Date.parse(String(message.Timestamp));
  if (!Number.isFinite(at)) throw new SignatureError('SIGNATURE_MALFORMED', 'SNS Timestamp is not a date');
  assertWithinTolerance(Math.floor(at / 1000), now, tolerance);
  return { scheme: 'sns', deliveryId: String(message.MessageId), timestamp: new Date(at), message };
}

async function confirm(url: string, context: HandshakeContext): Promise<void> {
  const answer = await context.fetch(url);
  if (answer.status < 200 || answer.status > 299) {
    // A 5xx makes SNS send the confirmation again.
    throw new Error(`SNS subscription confirmation answered ${answer.status}`);
  }
}

/**
 * Amazon SNS: the signature (v1 RSA-SHA1, v2 RSA-SHA256) is in the JSON body, checked with the certificate
 * from SigningCertURL (sns-certificates.ts) or pinned in the secret. Every topic of a region signs with one
 * certificate, so the message must also come from `topicArn`. Details: docs/senders.md.
 */
export const sns: SenderScheme<'sns'> = {
  name: 'sns',
  takesSecret: true,
  bodyMediaType: 'application/json',
  options: {
    topicArn: { describe: 'the SNS topic ARN whose messages are accepted', required: 'the SNS topic ARN' },
    toleranceSeconds: toleranceOption(3600),
    minSignatureVersion: { describe: 'the oldest SignatureVersion accepted: 2 refuses SHA1', default: 1 },
  },
  // Without a secret, the certificate is fetched from the SigningCertURL (sns-certificates.ts).
  secretOptional: true,
  secretHeaders: [],
  secretValuePrefixes: [],
  deliveryId: { bodyField: 'MessageId' },

  async fetchKeys({ rawBody }, certificates) {
    const url = jsonObjectOf(rawBody)?.SigningCertURL;
    if (!isSnsUrl(url)) {
      throw new SignatureError(
        'SIGNATURE_INVALID',
        'SigningCertURL is not an https sns.<region>.amazonaws.com(.cn) URL',
      );
    }
    return [await certificates.get(url)];
  },

  async handshake(request, context) {
    const type = jsonObjectOf(request.rawBody)?.Type;
    if (type !== 'SubscriptionConfirmation' && type !== 'UnsubscribeConfirmation') return undefined;
    const { message } = verifySns(request);
    if (type === 'SubscriptionConfirmation') {
      if (!isSnsUrl(message.SubscribeURL)) {
        throw new SignatureError(
          'SIGNATURE_INVALID',
          'SubscribeURL is not an https sns.<region>.amazonaws.com URL',
        );
      }
      await confirm(message.SubscribeURL, context);
    }
    return jsonAnswer({ type, confirmed: type === 'SubscriptionConfirmation' });
  },

  verify(input) {
    const { scheme, deliveryId, timestamp } = verifySns(input);
    return { scheme, deliveryId, timestamp };
  },

  sign() {
    throw new SigningError('SNS signs inside the message body: docrelay send cannot sign as SNS');
  },
};

/** Signs an SNS message as SNS does (tests and local tools, with a development private key). */
export function signSnsMessage(
  message: Readonly<Record<string, string>>,
  privateKeyPem: string,
): Record<string, string> {
  const algorithm = message.SignatureVersion === '1' ? 'sha1' : 'sha256';
  const signature = signBytes(
    algorithm,
    Buffer.from(snsStringToSign(message), 'utf8'),
    privateKeyOf(privateKeyPem, 'sns'),
  );
  return { ...message, Signature: signature.toString('base64') };
}
