/**
 * Webhook bodies: the media types docrelay takes and the value a mapping sees for each
 * (docs/configuration.md, "Bodies"), decoded only after the signature was checked over the raw bytes. The
 * worker decodes the stored body text with the same functions.
 */
import type { XMLParser } from 'fast-xml-parser';
import { defineValue, MAX_VALUE_DEPTH } from '../mapping/evaluate';
import { DeliveryRefusedError } from './errors';

/** The body formats docrelay decodes. */
export type BodyFormat = 'json' | 'form' | 'xml' | 'text';

/** A body's format and its media type (lower-case, without parameters). */
export interface BodyType {
  readonly format: BodyFormat;
  readonly mediaType: string;
}

/** A decoded body: its text as received (what the delivery record keeps) and the value a mapping sees. */
export interface DecodedBody {
  readonly bodyText: string;
  /** The text's UTF-8 bytes: the raw body, less a byte order mark (so nothing encodes the text again). */
  readonly bodyBytes: Uint8Array;
  readonly body: unknown;
}

const ACCEPTED =
  'application/json (or +json), application/x-www-form-urlencoded, application/xml, text/xml or text/plain';

/** The body type named by a Content-Type header; throws DeliveryRefusedError (415) for any other. */
export function bodyType(contentType: string | undefined): BodyType {
  const mediaType = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  const format = formatOf(mediaType);
  if (format !== undefined) return { format, mediaType };
  if (mediaType === 'multipart/form-data') {
    throw new DeliveryRefusedError(
      'unsupported-media-type',
      `multipart/form-data is not supported yet; send ${ACCEPTED}.`,
    );
  }
  throw new DeliveryRefusedError('unsupported-media-type', `Send the body as ${ACCEPTED}.`);
}

function formatOf(mediaType: string): BodyFormat | undefined {
  if (mediaType === 'application/json') return 'json';
  if (mediaType.startsWith('application/') && mediaType.endsWith('+json')) return 'json';
  if (mediaType === 'application/x-www-form-urlencoded') return 'form';
  if (mediaType === 'application/xml' || mediaType === 'text/xml') return 'xml';
  if (mediaType === 'text/plain') return 'text';
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The body's text: every accepted format is UTF-8. Throws DeliveryRefusedError (400) otherwise. */
export function bodyText(rawBody: Uint8Array): string {
  try {
    return utf8.decode(rawBody);
  } catch {
    throw new DeliveryRefusedError('malformed-body', 'The body is not valid UTF-8.');
  }
}

/** Decodes verified raw bytes of one format; throws DeliveryRefusedError (400) for a malformed body. */
export function decodeBody(rawBody: Uint8Array, type: BodyType): DecodedBody {
  const text = bodyText(rawBody);
  const bom = rawBody[0] === 0xef && rawBody[1] === 0xbb && rawBody[2] === 0xbf;
  return {
    bodyText: text,
    bodyBytes: bom ? rawBody.subarray(3) : rawBody,
    body: parseBodyText(text, type.format),
  };
}

/**
 * Parses a body's text (as received, or as the delivery record kept it). Throws DeliveryRefusedError (400)
 * for a malformed body.
 */
export function parseBodyText(text: string, format: BodyFormat): unknown {
  switch (format) {
    case 'json':
      return parseJson(text, 'The body is not valid JSON.');
    case 'form':
      return parseForm(text);
    case 'xml':
      return parseXml(text);
    case 'text':
      return text;
  }
}

/** The format of a media type a delivery record kept; a record without one (older payloads) is JSON. */
export function storedBodyFormat(mediaType: string | undefined): BodyFormat {
  return mediaType === undefined ? 'json' : (formatOf(mediaType) ?? 'json');
}

function parseJson(text: string, invalid: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DeliveryRefusedError(
      'malformed-body',
      error instanceof RangeError ? 'The JSON nests too deeply.' : invalid,
    );
  }
}

/** Most fields a form may have: a form is flat, so this bounds the work, not any real sender. */
export const MAX_FORM_FIELDS = 10_000;

/**
 * Form fields as an object of strings; a repeated field becomes an array of its values in order. A
 * `payload` field whose value is JSON (Slack interactivity) is parsed in place.
 */
function parseForm(text: string): Record<string, unknown> {
  const params = new URLSearchParams(text);
  const fields: Record<string, unknown> = {};
  let count = 0;
  for (const [name, value] of params) {
    count += 1;
    if (count > MAX_FORM_FIELDS) {
      throw new DeliveryRefusedError('malformed-body', `The form has more than ${MAX_FORM_FIELDS} fields.`);
    }
    // Own data properties only: a field named `__proto__` is a field like any other.
    const seen: unknown = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (seen === undefined) defineValue(fields, name, value);
    else defineValue(fields, name, Array.isArray(seen) ? [...seen, value] : [seen, value]);
  }
  const payload = Object.hasOwn(fields, 'payload') ? fields.payload : undefined;
  if (typeof payload === 'string' && /^\s*[[{]/.test(payload)) {
    defineValue(fields, 'payload', parseJson(payload, 'The form field "payload" is not valid JSON.'));
  }
  return fields;
}

// A document type declaration is where entities are declared (XXE, billion laughs): refused outright,
// before the parser sees the text, whatever the parser's own settings.
const DOCTYPE = /<!DOCTYPE/i;
const ENTITY = /<!ENTITY/i;

type XmlParserModule = typeof import('fast-xml-parser');

let xml: { parser: XMLParser; validator: XmlParserModule['XMLValidator'] } | undefined;

/**
 * The XML parser, loaded on the first XML body: most deliveries are JSON, and loading it with the module
 * would cost every cold start. `require()` keeps it bundled but unevaluated until then.
 */
function xmlTools(): NonNullable<typeof xml> {
  if (xml === undefined) {
    const { XMLParser, XMLValidator } = require('fast-xml-parser') as XmlParserModule;
    xml = {
      parser: new XMLParser({
        ignoreAttributes: false,
        attributeNamePrefix: '@',
        textNodeName: '#text',
        // Values stay strings: a zip code "01234" must not become 1234.
        parseTagValue: false,
        parseAttributeValue: false,
        // Only the five predefined entities remain possible once DOCTYPE is refused.
        processEntities: true,
        htmlEntities: false,
        ignoreDeclaration: true,
        ignorePiTags: true,
        trimValues: true,
        // The parser counts the elements open above the one it opens: this lets a document nest exactly as
        // deep as a JSON payload may (MAX_VALUE_DEPTH), and refuses one level more.
        maxNestedTags: MAX_VALUE_DEPTH - 1,
        // Repeated elements become arrays by the parser's own rule; single ones stay objects.
      }),
      validator: XMLValidator,
    };
  }
  return xml;
}

/** XML as an object of the documented shape; DOCTYPE and entity declarations are refused. */
function parseXml(text: string): Record<string, unknown> {
  if (DOCTYPE.test(text) || ENTITY.test(text)) {
    throw new DeliveryRefusedError(
      'malformed-body',
      'XML with a document type declaration or entities is refused.',
    );
  }
  const { parser, validator } = xmlTools();
  if (validator.validate(text) !== true) {
    throw new DeliveryRefusedError('malformed-body', 'The body is not well-formed XML.');
  }
  let parsed: unknown;
  try {
    parsed = parser.parse(text);
  } catch (error) {
    // The parser throws plain Errors for what its validator lets through (nesting, reserved names, some
    // malformed markup): each is the sender's body, never a reason for a 5xx a sender would retry forever.
    throw new DeliveryRefusedError('malformed-body', xmlParseProblem(error));
  }
  if (typeof parsed !== 'object' || parsed === null || Object.keys(parsed).length !== 1) {
    throw new DeliveryRefusedError('malformed-body', 'The XML body has no single document element.');
  }
  return parsed as Record<string, unknown>;
}

/** What a parser failure tells the sender: the limit or the name at fault, never a piece of the body. */
function xmlParseProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (message.startsWith('Maximum nested tags exceeded')) {
    return `The XML nests deeper than ${MAX_VALUE_DEPTH} elements.`;
  }
  const reserved = /Invalid name: "(__proto__|constructor|prototype)"/.exec(message);
  if (reserved !== null) {
    return `The XML uses "${reserved[1]}" as an element name, which docrelay refuses (JavaScript objects reserve it).`;
  }
  return 'The body is not well-formed XML.';
}
