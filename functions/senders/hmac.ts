import { createHmac, randomUUID } from 'node:crypto';
import { bytesEqual } from './common/constant-time';
import { decodeBase64, decodeHex } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  readHeader,
  requireHeader,
  requireSecrets,
  toleranceOf,
} from './common/headers';
import { hexDevSecret, signingSecret, unixSeconds } from './common/signing';
import type { SchemeConfigProblem, SenderScheme, VerifyConfig } from './types';

type Algorithm = NonNullable<VerifyConfig['algorithm']>;

const DIGEST_BYTES: Readonly<Record<Algorithm, number>> = { sha1: 20, sha256: 32, sha512: 64 };

/** The placeholders `signedContent` may use; anything else in braces is a configuration error. */
const PLACEHOLDER = /\{([a-z]+)\}/g;
const PLACEHOLDERS = new Set(['body', 'timestamp', 'id', 'url', 'method']);

/** The values a signed-content template is filled with; `body` stays bytes (never decoded and re-encoded). */
interface SignedValues {
  readonly body: Uint8Array;
  readonly timestamp?: string;
  readonly id?: string;
  readonly url: string;
  readonly method: string;
}

/** The parts fed to the HMAC, in order: the template's literal text and its placeholders' values. */
function signedParts(
  template: string,
  values: SignedValues,
  refuse: (message: string) => Error,
): (string | Uint8Array)[] {
  const parts: (string | Uint8Array)[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!PLACEHOLDERS.has(name)) throw refuse(`verify.signedContent has an unknown placeholder {${name}}`);
    parts.push(template.slice(last, match.index));
    const value = values[name as keyof SignedValues];
    if (value === undefined) {
      throw refuse(
        `verify.signedContent uses {${name}} but no ${name === 'id' ? 'idHeader' : 'timestampHeader'} is set`,
      );
    }
    parts.push(value);
    last = match.index + match[0].length;
  }
  parts.push(template.slice(last));
  return parts;
}

/**
 * What the option rules cannot see: a timestamp the signature does not cover is one the attacker sets (the
 * tolerance would check nothing), and every placeholder must be known and have its header.
 */
export function hmacConfigProblems(config: VerifyConfig): SchemeConfigProblem[] {
  const template = config.signedContent ?? '{body}';
  const used = new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''));
  const problems: SchemeConfigProblem[] = [];
  for (const name of used) {
    if (!PLACEHOLDERS.has(name)) {
      problems.push({ option: 'signedContent', message: `unknown placeholder {${name}}` });
    }
  }
  if (config.timestampHeader !== undefined && !used.has('timestamp')) {
    problems.push({
      option: 'timestampHeader',
      message:
        'signedContent does not include {timestamp}: the tolerance would check a header anyone can set; sign it (e.g. signedContent: "{timestamp}.{body}") or drop timestampHeader',
    });
  }
  if (used.has('timestamp') && config.timestampHeader === undefined) {
    problems.push({ option: 'signedContent', message: 'uses {timestamp} but no timestampHeader is set' });
  }
  if (used.has('id') && config.idHeader === undefined) {
    problems.push({ option: 'signedContent', message: 'uses {id} but no idHeader is set' });
  }
  return problems;
}

function digest(algorithm: Algorithm, key: string, parts: readonly (string | Uint8Array)[]): Buffer {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

function settings(config: VerifyConfig, refuse: (message: string) => Error) {
  const header = config.header?.trim().toLowerCase();
  if (header === undefined || header === '') throw refuse('verify scheme hmac needs a header');
  const algorithm = config.algorithm ?? 'sha256';
  if (!(algorithm in DIGEST_BYTES)) throw refuse('verify.algorithm must be sha1, sha256 or sha512');
  const encoding = config.encoding ?? 'hex';
  if (encoding !== 'hex' && encoding !== 'base64') throw refuse('verify.encoding must be hex or base64');
  return {
    header,
    algorithm,
    encoding,
    prefix: config.prefix ?? '',
    template: config.signedContent ?? '{body}',
    timestampHeader: config.timestampHeader?.toLowerCase(),
    idHeader: config.idHeader?.toLowerCase(),
  };
}

/**
 * A generic HMAC described in YAML, for senders without a preset: the digest in `header` over `signedContent`
 * (default `{body}`). A `timestampHeader` must be signed and within `toleranceSeconds`; an `idHeader` left
 * out of signedContent makes the signed content dedupe too (delivery-id.ts). Options: docs/senders.md.
 */
export const hmac: SenderScheme<'hmac'> = {
  name: 'hmac',
  takesSecret: true,
  options: {
    header: { describe: 'header carrying the signature', required: 'the header carrying the signature' },
    algorithm: { describe: 'HMAC hash: sha1, sha256 or sha512', default: 'sha256' },
    encoding: { describe: 'signature encoding', default: 'hex' },
    prefix: { describe: 'text before the signature, e.g. "sha256="' },
    signedContent: {
      describe: 'what is signed: a template over {body}, {timestamp}, {id}, {url}, {method}',
      default: '{body}',
    },
    timestampHeader: { describe: 'header carrying the signed Unix timestamp (seconds)' },
    toleranceSeconds: { describe: 'accepted clock skew, in seconds, with timestampHeader', default: 300 },
    idHeader: { describe: "header carrying the sender's delivery id (deduplication)" },
  },
  // The configured header is the secret one; redactHeaders adds it from the config.
  secretHeaders: [],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,
  checkConfig: hmacConfigProblems,

  verify({ rawBody, headers, secrets, config, now, url, method }) {
    const keys = requireSecrets(secrets, 'hmac');
    const refuse = (message: string): Error => new VerifyConfigError(message);
    const s = settings(config, refuse);
    const [problem] = hmacConfigProblems(config);
    if (problem !== undefined) throw refuse(`verify.${problem.option}: ${problem.message}`);
    const tolerance = toleranceOf(config.toleranceSeconds);
    const header = requireHeader(headers, s.header, s.header);
    if (!header.startsWith(s.prefix)) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        `${s.header} header does not start with the configured prefix`,
      );
    }
    const encoded = header.slice(s.prefix.length);
    const signature = s.encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
    if (signature?.length !== DIGEST_BYTES[s.algorithm]) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        `${s.header} header is not a ${s.encoding} HMAC-${s.algorithm}`,
      );
    }
    const timestamp =
      s.timestampHeader === undefined
        ? undefined
        : requireHeader(headers, s.timestampHeader, s.timestampHeader);
    const id = s.idHeader === undefined ? undefined : readHeader(headers, s.idHeader, s.idHeader);
    if (s.idHeader !== undefined && id === undefined && s.template.includes('{id}')) {
      throw new SignatureError('SIGNATURE_MISSING', `missing ${s.idHeader} header`);
    }
    const parts = signedParts(s.template, { body: rawBody, timestamp, id, url, method }, refuse);
    // Every key is tried, so which one matched (rotation) is not timed.
    let matched = false;
    for (const key of keys) matched = bytesEqual(digest(s.algorithm, key, parts), signature) || matched;
    if (!matched) {
      throw new SignatureError('SIGNATURE_INVALID', `${s.header} does not match the signed content`);
    }
    // After the signature: a signed timestamp is worth checking only once it is known to be the sender's.
    let signedAt: Date | undefined;
    if (timestamp !== undefined) {
      const seconds = parseUnixSeconds(timestamp, s.timestampHeader ?? '');
      assertWithinTolerance(seconds, now, tolerance);
      signedAt = new Date(seconds * 1000);
    }
    return {
      scheme: 'hmac',
      ...(id === undefined ? {} : { deliveryId: id }),
      ...(signedAt === undefined ? {} : { timestamp: signedAt }),
      // The signed content holds no id: its HMAC stands for it (the content key, delivery-id.ts).
      ...(s.template.includes('{id}') ? {} : { bodyMac: signature }),
    };
  },

  sign(input) {
    const refuse = (message: string): Error => new SigningError(message);
    const s = settings(input.config, refuse);
    const out: Record<string, string> = {};
    const timestamp = s.timestampHeader === undefined ? undefined : unixSeconds(input.now);
    if (s.timestampHeader !== undefined && timestamp !== undefined) out[s.timestampHeader] = timestamp;
    const id = s.idHeader === undefined ? undefined : (input.deliveryId ?? (input.newId ?? randomUUID)());
    if (s.idHeader !== undefined && id !== undefined) out[s.idHeader] = id;
    if (s.template.includes('{url}') && input.url === undefined) {
      throw new SigningError('verify.signedContent signs {url}: give the URL the delivery is posted to');
    }
    const parts = signedParts(
      s.template,
      { body: input.rawBody, timestamp, id, url: input.url ?? '', method: input.method ?? 'POST' },
      refuse,
    );
    out[s.header] = `${s.prefix}${digest(s.algorithm, signingSecret(input), parts).toString(s.encoding)}`;
    return out;
  },
};
