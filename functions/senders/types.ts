/** The verification schemes docrelay understands, one per sender family. */
export type VerifyScheme =
  | 'github'
  | 'stripe'
  | 'shopify'
  | 'slack'
  | 'standard-webhooks'
  | 'hmac-sha256'
  | 'token'
  | 'none';

/** An integration's `verify` block, as written in the config file (secret names, not values). */
export interface VerifyConfig {
  /** Which sender's signature scheme to check. */
  scheme: VerifyScheme;
  /** Secret NAME(s); several allow rotation. Resolved to values by the caller. */
  secret?: string | string[];
  /** hmac-sha256: the signature header (required); token: the token header. @default 'authorization' for token */
  header?: string;
  /** hmac-sha256: how the digest is written. @default 'hex' */
  encoding?: 'hex' | 'base64';
  /** hmac-sha256: a literal the header value must start with, stripped before decoding, e.g. `sha256=`. */
  prefix?: string;
  /** stripe, slack, standard-webhooks: largest allowed distance between the signed timestamp and now. @default 300 */
  toleranceSeconds?: number;
  /** none: must be true to accept unsigned deliveries. @default false */
  allowUnsigned?: boolean;
}

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
}

/** What a successful verification tells the caller about the delivery. */
export interface VerifiedDelivery {
  /** The scheme that accepted the delivery. */
  scheme: string;
  /** The sender's delivery id when the scheme carries one (webhook-id, X-GitHub-Delivery, X-Shopify-Webhook-Id). */
  deliveryId?: string;
  /** The signed timestamp, when the scheme has one. */
  timestamp?: Date;
}

/** One scheme's verifier: returns on success, throws SignatureError or VerifyConfigError otherwise. */
export type SchemeVerifier = (input: VerifyInput) => VerifiedDelivery;
