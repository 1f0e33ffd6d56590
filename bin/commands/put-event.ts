/**
 * `docrelay put-event <integrationId> --event <file>`: feeds an EventBridge event to an integration with
 * `eventBridge`. Locally it goes to the local stack's event path (the same handler the AWS rule targets); on
 * AWS it is put on the bus, where the rule's pattern decides whether it becomes a delivery.
 */
import { randomUUID } from 'node:crypto';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { readLocalSettings } from '../../functions/commons/env';
import { findIntegration, firstLine, loadConfigOrExplain, readInputFile } from './ops-args';
import { resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** An EventBridge event: what the file must give, and what is filled in. */
export interface EventInput {
  id: string;
  version: string;
  source: string;
  'detail-type': string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/**
 * Validates an event file's JSON: `source`, `detail-type` (strings) and `detail` (an object) are required;
 * `id`, `version`, `time`, `account`, `region` and `resources` are filled in when missing.
 */
export function completeEvent(
  value: unknown,
  defaults: { account: string; region: string; now: Date; newId?: () => string },
): EventInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError('the event must be a JSON object');
  }
  const event = value as Record<string, unknown>;
  const text = (key: string, required: boolean): string | undefined => {
    const field = event[key];
    if (field === undefined && !required) return undefined;
    if (typeof field !== 'string' || field.trim() === '') {
      throw new CliError(`the event needs "${key}" (a non-empty string)`);
    }
    return field;
  };
  const source = text('source', true) as string;
  const detailType = text('detail-type', true) as string;
  const detail = event.detail;
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) {
    throw new CliError('the event needs "detail" (a JSON object)');
  }
  const resources = event.resources ?? [];
  if (!Array.isArray(resources) || resources.some((item) => typeof item !== 'string')) {
    throw new CliError('the event\'s "resources" must be a list of strings');
  }
  const time = text('time', false) ?? defaults.now.toISOString();
  if (Number.isNaN(Date.parse(time))) throw new CliError('the event\'s "time" is not an ISO 8601 timestamp');
  return {
    ...event,
    id: text('id', false) ?? (defaults.newId ?? randomUUID)(),
    version: text('version', false) ?? '0',
    source,
    'detail-type': detailType,
    account: text('account', false) ?? defaults.account,
    time,
    region: text('region', false) ?? defaults.region,
    resources: resources as string[],
    detail: detail as Record<string, unknown>,
  };
}

/** Sends the event; resolves to the exit code. */
export async function putEvent(
  ctx: CommandContext,
  integrationId: string,
  values: { event: string },
): Promise<number> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const loaded = await loadConfigOrExplain(settings.configPath);
  const integration = findIntegration(loaded, integrationId);
  if (integration.config.eventBridge === undefined) {
    throw new CliError(
      `integration "${integrationId}" has no eventBridge block: it takes webhooks (docrelay send ${integrationId} --payload <file>)`,
    );
  }
  const bytes = await readInputFile(ctx.cwd, values.event, 'event');
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new CliError(`the event file ${values.event} is not JSON`);
  }

  const target = await resolveStackTarget(ctx);
  try {
    if (target.kind === 'aws') return await putOnBus(ctx.stdout, target, parsed);
    const event = completeEvent(parsed, {
      account: '000000000000',
      region: target.region ?? 'us-east-1',
      now: new Date(),
    });
    const mismatch = patternMismatch(integration.config.eventBridge.eventPattern, event);
    if (mismatch !== undefined) {
      throw new CliError(
        `the event does not match integration "${integrationId}"'s eventPattern (${mismatch}): on AWS its rule would not deliver it`,
      );
    }
    if (target.apiUrl === undefined)
      throw new CliError('the local stack wrote no API URL: restart npm start');
    return await postLocally(ctx.stdout, target.apiUrl, integrationId, event);
  } finally {
    target.close();
  }
}

async function postLocally(
  stdout: NodeJS.WritableStream,
  apiUrl: string,
  integrationId: string,
  event: EventInput,
): Promise<number> {
  const url = `${apiUrl.replace(/\/+$/, '')}/_local/events/${encodeURIComponent(integrationId)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(
      `cannot reach the local stack at ${apiUrl}: ${firstLine((error as { cause?: unknown }).cause ?? error)}`,
    );
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const problem = (body ?? {}) as { title?: unknown; detail?: unknown };
    const parts = [problem.title, problem.detail].filter((p): p is string => typeof p === 'string');
    throw new CliError(`${response.status} ${parts.join(': ') || response.statusText}`.replace(/\s+/g, ' '));
  }
  stdout.write(`${body === undefined ? text : JSON.stringify(body, null, 2)}\n`);
  return 0;
}

async function putOnBus(
  stdout: NodeJS.WritableStream,
  target: StackTarget,
  parsed: unknown,
): Promise<number> {
  // The bus assigns the id, account and region; only what PutEvents takes is sent.
  const event = completeEvent(parsed, { account: '-', region: target.region ?? '-', now: new Date() });
  const result = await target.clients.eventBridge.send(
    new PutEventsCommand({
      Entries: [
        {
          Source: event.source,
          DetailType: event['detail-type'],
          Detail: JSON.stringify(event.detail),
          Time: new Date(event.time),
          Resources: event.resources,
          ...(target.eventBusName === undefined ? {} : { EventBusName: target.eventBusName }),
        },
      ],
    }),
  );
  const entry = result.Entries?.[0];
  if ((result.FailedEntryCount ?? 0) > 0 || entry?.EventId === undefined) {
    throw new CliError(
      `EventBridge refused the event: ${entry?.ErrorCode ?? 'unknown'} ${entry?.ErrorMessage ?? ''}`.trim(),
    );
  }
  stdout.write(
    `${JSON.stringify({ eventId: entry.EventId, bus: target.eventBusName ?? 'default', note: "the rule's eventPattern decides whether it becomes a delivery (deliveryId = eventId)" }, null, 2)}\n`,
  );
  return 0;
}

/**
 * Where the event fails the pattern, or undefined when it matches or the pattern uses operators this check
 * does not evaluate (prefix, numeric, exists, ...): only lists of plain values are compared, as EventBridge does.
 */
export function patternMismatch(pattern: unknown, event: unknown, path = ''): string | undefined {
  if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern)) return undefined;
  for (const [key, expected] of Object.entries(pattern)) {
    const here = path === '' ? key : `${path}.${key}`;
    const actual =
      event !== null && typeof event === 'object' && !Array.isArray(event) && Object.hasOwn(event, key)
        ? (event as Record<string, unknown>)[key]
        : undefined;
    if (Array.isArray(expected)) {
      if (expected.some((item) => item !== null && typeof item === 'object')) continue;
      const values = Array.isArray(actual) ? actual : [actual];
      if (!values.some((value) => expected.includes(value))) {
        return `${here} is ${JSON.stringify(actual) ?? 'missing'}, expected one of ${JSON.stringify(expected)}`;
      }
    } else {
      const nested = patternMismatch(expected, actual, here);
      if (nested !== undefined) return nested;
    }
  }
  return undefined;
}
