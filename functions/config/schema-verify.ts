/** `integrations[].verify`: the scheme list and option rules derive from the sender modules. */
import { z } from 'zod';
import { SENDER_SCHEMES, schemesTaking, senderScheme } from '../senders/registry';
import type { OptionRule, VerifyConfig, VerifyOptionName } from '../senders/types';
import { HEADER_NAME, secretName } from './schema-fields';

/** What an option means for one scheme, with its default or that it is required. */
const ruleText = (rule: OptionRule<unknown>): string =>
  rule.required !== undefined
    ? `${rule.describe} (required${rule.mustBe === undefined ? '' : `: ${String(rule.mustBe)}`})`
    : rule.default !== undefined
      ? `${rule.describe} (default ${String(rule.default)})`
      : rule.describe;

/** "a, b: what it means there; c: ..." for an option, from the schemes that take it (same text grouped). */
const describeOption = (option: VerifyOptionName): string => {
  const groups = new Map<string, string[]>();
  for (const scheme of schemesTaking(option)) {
    const text = ruleText(scheme.options[option] as OptionRule<unknown>);
    groups.set(text, [...(groups.get(text) ?? []), scheme.name]);
  }
  return `${[...groups].map(([text, names]) => `${names.join(', ')}: ${text}`).join('; ')}.`;
};

// The option fields every scheme shares; which scheme takes which, and their defaults, come from the schemes.
const verifyOptionFields = {
  header: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('header')),
  encoding: z.enum(['hex', 'base64']).optional().describe(describeOption('encoding')),
  prefix: z.string().optional().describe(describeOption('prefix')),
  toleranceSeconds: z
    .number()
    .int('must be a whole number')
    .min(1)
    .max(86_400)
    .optional()
    .describe(describeOption('toleranceSeconds')),
  allowUnsigned: z.boolean().optional().describe(describeOption('allowUnsigned')),
  algorithm: z.enum(['sha1', 'sha256', 'sha512']).optional().describe(describeOption('algorithm')),
  signedContent: z.string().min(1).optional().describe(describeOption('signedContent')),
  timestampHeader: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('timestampHeader')),
  idHeader: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('idHeader')),
  topicArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/, 'must be an SNS topic ARN')
    .optional()
    .describe(describeOption('topicArn')),
  verifyTokenSecret: secretName.optional().describe(describeOption('verifyTokenSecret')),
  minSignatureVersion: z
    .union([z.literal(1), z.literal(2)])
    .optional()
    .describe(describeOption('minSignatureVersion')),
} satisfies Record<VerifyOptionName, z.ZodType>;

const VERIFY_OPTION_NAMES = Object.keys(verifyOptionFields) as VerifyOptionName[];

/** `integrations[].verify`: how a delivery's authenticity is checked. */
export const VerifyConfigSchema = z
  .strictObject({
    scheme: z
      .enum(SENDER_SCHEMES, { error: `scheme must be one of ${SENDER_SCHEMES.join(', ')}` })
      .describe('Signature scheme of the sender.'),
    secret: z
      .union([secretName, z.array(secretName).min(1, 'give at least one secret name').max(5)])
      .optional()
      .describe('Secret name, or several while a secret is rotated (any of them verifies).'),
    ...verifyOptionFields,
  })
  .superRefine((verify, ctx) => {
    const scheme = senderScheme(verify.scheme);
    if (scheme === undefined) return;
    for (const option of VERIFY_OPTION_NAMES) {
      if (verify[option] === undefined || scheme.options[option] !== undefined) continue;
      const takers = schemesTaking(option).map(({ name }) => name);
      ctx.addIssue({
        code: 'custom',
        path: [option],
        message: `scheme ${scheme.name} does not take ${option} (only ${takers.join(', ')} ${takers.length === 1 ? 'does' : 'do'})`,
      });
    }
    if (!scheme.takesSecret && verify.secret !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['secret'], message: `scheme ${scheme.name} takes no secret` });
    } else if (scheme.takesSecret && verify.secret === undefined && scheme.secretOptional !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['secret'],
        message: `scheme ${scheme.name} requires secret (the name of the secret holding the signing key)`,
      });
    }
    for (const option of VERIFY_OPTION_NAMES) {
      const rule: OptionRule<unknown> | undefined = scheme.options[option];
      if (rule?.required === undefined) continue;
      const value = verify[option];
      if (value !== undefined && (rule.mustBe === undefined || value === rule.mustBe)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [option],
        message: `scheme ${scheme.name} requires ${option}${rule.mustBe === undefined ? '' : `: ${String(rule.mustBe)}`} (${rule.required})`,
      });
    }
    for (const problem of scheme.checkConfig?.(verify as VerifyConfig) ?? []) {
      ctx.addIssue({ code: 'custom', path: [problem.option], message: problem.message });
    }
  })
  .transform((verify): VerifyConfig => {
    // Scheme defaults are filled here so every consumer (ingest, CLI send, CDK) sees the same values.
    const out: VerifyConfig = { ...verify };
    if (out.header !== undefined) out.header = out.header.toLowerCase();
    if (out.timestampHeader !== undefined) out.timestampHeader = out.timestampHeader.toLowerCase();
    if (out.idHeader !== undefined) out.idHeader = out.idHeader.toLowerCase();
    const options = senderScheme(verify.scheme)?.options ?? {};
    const filled = out as Record<VerifyOptionName, unknown>;
    for (const option of VERIFY_OPTION_NAMES) {
      const fallback = options[option]?.default;
      if (filled[option] === undefined && fallback !== undefined) filled[option] = fallback;
    }
    return out;
  })
  .describe('How deliveries are verified.');
