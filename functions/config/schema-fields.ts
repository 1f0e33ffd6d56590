/** Field builders shared by the configuration schema's sections (ids, URLs, secret names, expressions). */
import { z } from 'zod';
import { SECRET_VALUE_PREFIXES } from '../senders/registry';
import { checkExpressionSyntax } from './expressions';

/** An id that is safe in a URL path segment. */
export const URL_SAFE_ID = /^[a-z0-9][a-z0-9-_]{0,63}$/i;
const LOOPBACK_HOST = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
// Secrets Manager's name alphabet; a pasted secret *value* usually breaks it or has a telltale prefix.
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A short description of a YAML value's type, for messages. */
export const describeInput = (input: unknown): string =>
  input === null
    ? 'null'
    : Array.isArray(input)
      ? 'a list'
      : typeof input === 'object'
        ? 'a mapping'
        : typeof input;

/** A JSONata expression: a non-empty string that compiles. YAML numbers and booleans get a hint to quote. */
export const expression = (what: string) =>
  z
    .string({
      error: (issue) =>
        typeof issue.input === 'number' || typeof issue.input === 'boolean'
          ? `${what} must be a JSONata expression string; for the constant ${issue.input} write "${issue.input}" (quoted)`
          : undefined,
    })
    .min(1, `${what} must not be empty`)
    .superRefine((source, ctx) => {
      const problem = checkExpressionSyntax(source);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem.message });
    })
    .describe(`${what}: a JSONata expression`);

/** A string YAML might have read as a number (ids): the message tells the user to quote it. */
export const quotedString = (what: string) =>
  z.string({
    error: (issue) =>
      typeof issue.input === 'number'
        ? `${what} must be a string: quote it, e.g. "${issue.input}" (a YAML number loses leading zeros)`
        : undefined,
  });

const isLoopback = (url: URL): boolean => LOOPBACK_HOST.test(url.hostname);

/** An absolute https URL (http only for loopback hosts). */
export const httpsUrl = () =>
  z
    .url({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an absolute URL') })
    .superRefine((text, ctx) => {
      const url = new URL(text);
      if (url.protocol === 'https:') return;
      if (url.protocol === 'http:' && isLoopback(url)) return;
      ctx.addIssue({
        code: 'custom',
        message: `must use https (http only for localhost, 127.0.0.1 or [::1]), got ${url.protocol}//${url.host}`,
      });
    });

/** A download origin: scheme://host[:port] only. */
export const origin = httpsUrl().superRefine((text, ctx) => {
  const url = new URL(text);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    ctx.addIssue({
      code: 'custom',
      message: `a download origin is scheme://host[:port] only, e.g. ${url.origin} (no path or query)`,
    });
  }
});

/** The name (never the value) of a secret. */
export const secretName = z
  .string()
  .min(1, 'a secret name must not be empty')
  .superRefine((name, ctx) => {
    if (SECRET_VALUE_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      ctx.addIssue({
        code: 'custom',
        message:
          'this looks like a secret value: put the secret NAME here (e.g. docrelay/stripe-webhook) and its value in Secrets Manager or DOCRELAY_SECRETS_FILE',
      });
    } else if (!SECRET_NAME.test(name)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a secret name uses only letters, digits and /_+=.@- (at most 512 characters)',
      });
    }
  });

/** A template property name; prototype keys refused. */
export const propertyName = z
  .string()
  .min(1)
  .refine((name) => !RESERVED_KEYS.has(name), 'this name is reserved (prototype pollution guard)');

// Uniqueness checks run even when some elements are invalid (zod skips refinements after an issue by
// default), so that a duplicate is reported in the same run as everything else; hence the defensive reads.
/** Runs a refinement even after other issues. */
export const always = (): boolean => true;

/** A refinement reporting case-insensitive duplicates of `field` in a list. */
export const uniqueNames =
  (field: 'id' | 'name', message: (name: string, first: number) => string) =>
  (items: unknown, ctx: z.RefinementCtx): void => {
    if (!Array.isArray(items)) return;
    const seen = new Map<string, number>();
    items.forEach((item: unknown, index) => {
      const name =
        typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
      if (typeof name !== 'string') return;
      const key = name.toLowerCase();
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else ctx.addIssue({ code: 'custom', path: [index, field], message: message(name, first) });
    });
  };
