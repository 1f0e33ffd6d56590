// Buffer.from(x, 'hex' | 'base64') silently skips or truncates at invalid characters, which would let a
// malformed header decode to *something*; these decoders refuse anything that is not canonical.

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict hex decode (either case); undefined when the text is not whole hex bytes. */
export const decodeHex = (text: string): Buffer | undefined =>
  text.length > 0 && HEX.test(text) ? Buffer.from(text, 'hex') : undefined;

/** Strict standard base64 decode (padding required); undefined when the text is not valid base64. */
export const decodeBase64 = (text: string): Buffer | undefined =>
  text.length > 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;

/** True when the text is unpadded base64url (the JWK encoding). */
export const isBase64Url = (text: string): boolean => BASE64URL.test(text);
