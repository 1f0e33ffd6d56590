/**
 * What a sender scheme is: everything docrelay knows about one family of webhook senders, in one object.
 * Each scheme's module exports one `SenderScheme`; the registry derives every list from them.
 */
import type { SenderName } from './registry';
import type { CertificateSource } from './sns-certificates';

/** An integration's `verify` block, as written in the config file (secret names, not values). */
export interface VerifyConfig extends VerifyOptions {
  /** Which sender's signature scheme to check. */
  scheme: SenderName;
  /** Secret NAME(s); several allow rotation. Resolved to values by the caller. */
  secret?: string | string[];
}

/** The scheme-specific options of a `verify` block; which scheme takes which is each scheme's `options`. */
export interface VerifyOptions {
  /** The header carrying the signature or token (lower-cased by the config loader). */
  header?: string;
  /** How the digest is written. */
  encoding?: 'hex' | 'base64';
  /** A literal the header value must start with, stripped before decoding, e.g. `sha256=`. */
  prefix?: string;
  /** Largest allowed distance between the signed timestamp and now, in seconds. */
  toleranceSeconds?: number;
  /** Must be true to accept unsigned deliveries. */
  allowUnsigned?: boolean;
  /** The HMAC's hash (generic `hmac`). */
  algorithm?: 'sha1' | 'sha256' | 'sha512';
  /** What is signed, a template over {body}, {timestamp}, {id}, {url}, {method} (generic `hmac`). */
  signedContent?: string;
  /** The header carrying the signed timestamp (generic `hmac`), lower-cased by the config loader. */
  timestampHeader?: string;
  /** The header carrying the sender's delivery id (generic `hmac`), lower-cased by the config loader. */
  idHeader?: string;
  /** The SNS topic(s) whose messages are accepted: every topic in a region signs with the same certificate. */
  topicArn?: string;
  /** NAME of the secret holding the verify token a sender's GET challenge presents (Meta's `hub.verify_token`). */
  verifyTokenSecret?: string;
  /** The oldest signature version accepted (SNS: 2 refuses SHA1 signatures). */
  minSignatureVersion?: 1 | 2;
}

/** The name of one scheme-specific option. */
export type VerifyOptionName = keyof VerifyOptions;

/** How one scheme uses one option: the config schema derives its checks, defaults and description from it. */
export interface OptionRule<T> {
  /** What the option means for this scheme, for the JSON Schema description, e.g. `header carrying the signature`. */
  readonly describe: string;
  /** The value filled in when the option is left out. */
  readonly default?: T;
  /** When set, a config without the option is refused; the text says why, e.g. `the header carrying the signature`. */
  readonly required?: string;
  /** The one value accepted (with `required`: `allowUnsigned: true`). */
  readonly mustBe?: T;
}

/** The options one scheme takes; any other is refused by the config schema, naming the schemes that take it. */
export type SchemeOptions = { readonly [K in VerifyOptionName]?: OptionRule<NonNullable<VerifyOptions[K]>> };

/** Where a sender puts its own id for a delivery, the default deduplication key. */
export type DeliveryIdSource =
  | {
      /** Lower-case header name, e.g. `x-github-delivery`. */
      readonly header: string;
      /** Whether the signature covers the header (an unsigned id can be changed by whoever replays a delivery). */
      readonly signed: boolean;
    }
  | {
      /** Top-level field of the JSON body, e.g. Stripe's `id`; the body is what the signature covers. */
      readonly bodyField: string;
    }
  | {
      /** A field nested in the body, outermost first, e.g. Mailgun's `signature.token` (which it signs). */
      readonly bodyPath: readonly [string, ...string[]];
    };

/** Everything one verification needs; nothing here is parsed from JSON yet. */
export interface VerifyInput {
  /** The request body exactly as received: signatures cover these bytes, never a re-serialised body. */
  rawBody: Buffer;
  /** Header names lower-cased; a repeated header joined by ', '. */
  headers: Readonly<Record<string, string>>;
  /** The integration's verify block. */
  config: VerifyConfig;
  /** Resolved secret VALUES in config order; any one may match (rotation). */
  secrets: readonly string[];
  /** The receive time, injected so tolerance checks are testable. */
  now: Date;
  /**
   * The public URL the sender posted to, with its query string exactly as sent: the integration's
   * `publicUrl` when set, else rebuilt from the request (scheme, host, stage, path, query). Senders such as
   * Twilio, Square and HubSpot sign it.
   */
  url: string;
  /** The HTTP method, upper-case (`POST`; `GET` only for schemes that list it in `methods`). */
  method: string;
}

/** A request that may be a sender's challenge or handshake rather than a delivery. */
export interface HandshakeRequest extends VerifyInput {
  /** The query string, decoded (Meta's `hub.challenge`, `hub.verify_token`). */
  readonly query: Readonly<Record<string, string>>;
}

/** What a handshake may do besides answering; the ingest provides it, tests inject fakes. */
export interface HandshakeContext {
  /**
   * GETs a URL the sender asked to be fetched (SNS `SubscribeURL`). The scheme checks the host first; the
   * ingest's implementation also refuses anything but https to `sns.<region>.amazonaws.com`.
   */
  fetch(url: string): Promise<{ readonly status: number; readonly body: string }>;
  /**
   * Keeps a secret the sender hands over during its handshake (Asana's `X-Hook-Secret`) under the
   * integration's first secret name, so later verifications read it from the secret source.
   */
  keepSecret(value: string): Promise<void>;
  /** Reads a secret by NAME (e.g. `verifyTokenSecret`), from the same source as the verify secrets. */
  secret(name: string): Promise<string>;
  /** The integration's verify secrets read again past any cache (a window an operator just opened). */
  rereadSecrets(): Promise<readonly string[]>;
}

/** The answer to a challenge or handshake; no job is created for it. */
export interface HandshakeAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** Extra response headers (lower-case names), e.g. Asana's `x-hook-secret` echo. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a successful verification tells the caller about the delivery. */
export interface VerifiedDelivery {
  /** The scheme that accepted the delivery. */
  scheme: string;
  /** The sender's delivery id when the scheme carries one in a header (webhook-id, X-GitHub-Delivery, ...). */
  deliveryId?: string;
  /** The signed timestamp, when the scheme has one. */
  timestamp?: Date;
  /**
   * For schemes whose signature is an HMAC of raw bytes that hold no delivery id (the body, perhaps with a
   * signed timestamp): the HMAC that matched. The same content under the same key gives the same HMAC, so a
   * digest of it stands for the content (the content key). It is the signature: never kept or logged as is.
   */
  bodyMac?: Uint8Array;
  /**
   * For schemes that sign parsed content rather than bytes (Twilio's sorted parameters, Adyen's eight item
   * fields): a SHA-256 of what is signed, in canonical form, so a re-serialised replay has the same key.
   */
  signedDigest?: Uint8Array;
}

/** A configuration the scheme refuses, and the option it is about (config check and start-up). */
export interface SchemeConfigProblem {
  readonly option: VerifyOptionName;
  readonly message: string;
}

/** What signing one delivery as its sender would (`docrelay send`) needs. */
export interface SignInput {
  /** The integration's verify block. */
  readonly config: VerifyConfig;
  /** Secret VALUES in config order; the first one signs (during a rotation, list the new secret first). */
  readonly secrets: readonly string[];
  /** The bytes that will be posted, exactly. */
  readonly rawBody: Buffer;
  /** The signing time (timestamped schemes). */
  readonly now: Date;
  /** The sender's delivery id, for schemes that carry one in a header; a new one otherwise. */
  readonly deliveryId?: string;
  /** New ids. @default randomUUID */
  readonly newId?: () => string;
  /** The URL the delivery is posted to, for schemes that sign it (Twilio, Square, HubSpot, generic hmac's `{url}`). */
  readonly url?: string;
  /** The HTTP method. @default 'POST' */
  readonly method?: string;
}

/** One sender scheme: all that is known about it. Adding a scheme is one such module and one registry line. */
export interface SenderScheme<Name extends string = string> {
  /** The `verify.scheme` value, e.g. `github`. */
  readonly name: Name;
  /** Whether the scheme needs `verify.secret` (every scheme but `none`). */
  readonly takesSecret: boolean;
  /** The scheme-specific options it takes. */
  readonly options: SchemeOptions;
  /** Lower-case names of the headers that carry a signature or credential: never stored or logged. */
  readonly secretHeaders: readonly string[];
  /** Prefixes of the sender's secret VALUES (e.g. `whsec_`): the config refuses them where a NAME belongs. */
  readonly secretValuePrefixes: readonly string[];
  /** Where the sender puts its own delivery id; absent when it has none (the body hash is used). */
  readonly deliveryId?: DeliveryIdSource;
  /**
   * A development value for one of its secrets (the local stack creates them), in the form the sender's
   * secrets take, from random bytes; absent for a scheme without secrets.
   */
  devSecret?(random: Buffer): string;
  /** The media type its sender's bodies are, whatever Content-Type says (SNS posts JSON as text/plain). */
  readonly bodyMediaType?: string;
  /** The HTTP methods its webhook route accepts. @default ['POST'] (Meta adds GET for its challenge) */
  readonly methods?: readonly string[];
  /**
   * Recognises and answers the sender's challenge or handshake (Slack url_verification, Zoom, Discord PING,
   * Asana, Meta, SNS, Xero); undefined for an ordinary delivery. Called before `verify` with the raw bytes,
   * so a handshake the sender signs must verify it itself. Throws SignatureError to refuse.
   */
  handshake?(
    request: HandshakeRequest,
    context: HandshakeContext,
  ): HandshakeAnswer | undefined | Promise<HandshakeAnswer | undefined>;
  /**
   * True when its handshake keeps a secret the sender hands over (Asana's X-Hook-Secret): the ingest may then
   * write the integration's first secret (the construct grants PutSecretValue on it).
   */
  readonly keepsHandedSecret?: boolean;
  /** Problems of a verify block the option rules cannot see (combinations of options); none when absent. */
  checkConfig?(config: VerifyConfig): readonly SchemeConfigProblem[];
  /** True when `verify.secret` may be left out: the keys then come from `fetchKeys`. */
  readonly secretOptional?: boolean;
  /**
   * For senders whose key is named in the delivery (SNS's SigningCertURL), when no secret is configured: the
   * keys `verify` then takes as its secrets, from a source that checks where they come from.
   */
  fetchKeys?(input: VerifyInput, certificates: CertificateSource): Promise<readonly string[]>;
  /** Verifies one delivery over its raw bytes; throws SignatureError (refuse, 401) or VerifyConfigError. */
  verify(input: VerifyInput): VerifiedDelivery;
  /** The headers (lower-case names) its sender would send with these bytes; throws SigningError. */
  sign(input: SignInput): Record<string, string>;
  /**
   * For senders that sign inside the body (Mailgun, Adyen) or carry a signed time in it (Linear): the bytes
   * as that sender would post them, signature or time written in; `sign` then takes these bytes.
   */
  signBody?(input: SignInput): Buffer;
}
