/** `integrations[]`: one source of deliveries, its answer and its document rules. */
import { z } from 'zod';
import { always, expression, propertyName, quotedString, URL_SAFE_ID, uniqueNames } from './schema-fields';
import { VerifyConfigSchema } from './schema-verify';

/** `integrations[].documents[].template`: which template (and file) a rule generates. */
export const TemplateRefSchema = z.strictObject({
  id: quotedString('template.id')
    .regex(/^\d+$/, 'template.id is the numeric id of a template, e.g. "9001" (see docrelay templates list)')
    .describe('Template id (a numeric string: quote it).'),
  fileId: quotedString('template.fileId')
    .min(1)
    .optional()
    .describe('Template file id; required when the template has several files.'),
});

/** `integrations[].documents[]`: a rule; when `when` holds, one document is generated. */
export const DocumentRuleSchema = z
  .strictObject({
    name: z
      .string()
      .regex(URL_SAFE_ID, 'a rule name is 1-64 letters, digits, "-" or "_", starting with a letter or digit')
      .describe('Rule name, unique within the integration.'),
    when: expression('when').optional().describe('JSONata predicate; the rule applies when it is truthy.'),
    template: TemplateRefSchema,
    data: z
      .record(propertyName, expression('a data value'))
      .describe('Template property name -> JSONata expression giving its value.'),
  })
  .describe('A rule: when it holds, one document is generated.');

const eventPattern = z
  .record(z.string(), z.unknown())
  .superRefine((pattern, ctx) => {
    const keys = Object.keys(pattern);
    if (keys.length === 0) ctx.addIssue({ code: 'custom', message: 'an event pattern must not be empty' });
    for (const key of keys) {
      const value = pattern[key];
      if (typeof value !== 'object' || value === null) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `an event pattern value is a list of matches (e.g. ["${String(value)}"]) or a nested mapping`,
        });
      }
    }
  })
  .describe('EventBridge event pattern, e.g. { source: ["myapp.orders"], detail-type: ["Order Paid"] }.');

/** `integrations[].respond`: a fixed answer to every accepted delivery (new, duplicate or matching no rule). */
export const RespondConfigSchema = z
  .strictObject({
    status: z
      .number()
      .int('must be a whole number')
      .min(200, 'a delivery that was accepted is answered with 2xx')
      .max(299, 'a delivery that was accepted is answered with 2xx')
      .default(200)
      .describe('HTTP status (2xx).'),
    contentType: z
      .string()
      .regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;.*)?$/i, 'must be a media type, e.g. text/plain')
      .max(200)
      .default('text/plain')
      .describe('Content-Type of the answer.'),
    body: z.string().max(10_000).default('').describe('The answer body, e.g. [accepted] or <Response/>.'),
  })
  .describe('A fixed answer for senders that expect one.');

/** `integrations[]`: one webhook source (and/or EventBridge event source). */
export const IntegrationConfigSchema = z
  .strictObject({
    id: z
      .string()
      .regex(
        URL_SAFE_ID,
        'an integration id is 1-64 letters, digits, "-" or "_", starting with a letter or digit',
      )
      .describe('Integration id; the webhook URL is POST /v1/hooks/{id}.'),
    verify: VerifyConfigSchema.optional().describe(
      'How webhooks are verified. Leave it out for an events-only integration: it then has no webhook URL.',
    ),
    publicUrl: z
      .url({
        protocol: /^https?$/,
        error: 'publicUrl is an http(s) URL, e.g. https://hooks.example.com/v1/hooks/orders',
      })
      .optional()
      .describe(
        'The URL the sender posts to, as it signs it (Twilio, Square, HubSpot...): set it behind a custom domain or proxy; default rebuilt from the request.',
      ),
    respond: RespondConfigSchema.optional().describe(
      'The answer to an accepted delivery, for senders that want one (Adyen: [accepted]); default 202 with JSON.',
    ),
    deliveryId: expression('deliveryId')
      .optional()
      .describe(
        'JSONata giving the delivery id (deduplication); default per scheme, else the SHA-256 of the body.',
      ),
    eventBridge: z
      .strictObject({ eventPattern })
      .optional()
      .describe('Also take matching EventBridge events as deliveries.'),
    smoke: z
      .strictObject({
        payload: z.string().min(1).describe('The body to send: a file path relative to this config file.'),
      })
      .optional()
      .describe('Marks the integration `docrelay smoke` sends its test delivery to (the first one marked).'),
    throttle: z
      .strictObject({
        rateLimit: z.number().min(0).max(10000).describe('Requests per second, steady state.'),
        burstLimit: z.number().int('must be a whole number').min(0).max(5000).describe('Requests at once.'),
      })
      .optional()
      .describe(
        "AWS only: this integration's own API Gateway throttle on its webhook route; default the stack's throttle.",
      ),
    documents: z
      .array(DocumentRuleSchema)
      .min(1, 'an integration needs at least one document rule')
      .superRefine(
        uniqueNames('name', (name, first) => `duplicate rule name "${name}" (also documents[${first}])`),
        {
          when: always,
        },
      ),
  })
  .superRefine((integration, ctx) => {
    if (integration.verify === undefined && integration.eventBridge === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['verify'],
        message:
          'an integration takes webhooks (give verify) or EventBridge events (give eventBridge), or both',
      });
    }
  })
  .describe('One source of deliveries and its document rules.');
