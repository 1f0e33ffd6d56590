/**
 * The SQS wire format of a job message, known only to this adapter. A message names the job only: the
 * payload rests sealed in the delivery record (the outbox), so a message can always be sent again (by the
 * sender's retry, the reconciler or a replay) and is small whatever the webhook's size.
 */
import { DocrelayError } from '../../commons/errors';

/** The keys a job message has: validated on receipt (below), never trusted as a cast. */
const KEYS = new Set(['v', 'jobId']);

/** What is wrong with a parsed message, at most three issues, each named by its path. */
function issuesOf(json: unknown): string[] {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return ['(root): expected an object'];
  const message = json as Record<string, unknown>;
  const issues: string[] = [];
  if (message.v !== 1) issues.push('v: expected 1');
  const { jobId } = message;
  if (typeof jobId !== 'string' || jobId.length < 1 || jobId.length > 64) {
    issues.push('jobId: expected a string of 1 to 64 characters');
  }
  for (const key of Object.keys(message)) if (!KEYS.has(key)) issues.push(`${key}: unknown key`);
  return issues.slice(0, 3);
}

/** A message that is not a job message (poison): it can never succeed. */
export class InvalidJobMessageError extends DocrelayError {
  override name = 'InvalidJobMessageError';
  constructor(issues: string) {
    super('INVALID_JOB_MESSAGE', `the queue message is not a job message: ${issues}`);
  }
}

/** The body of the message that hands `jobId` to the worker. */
export const encodeJobMessage = (jobId: string): string => JSON.stringify({ v: 1, jobId });

/** The job a message body names; throws InvalidJobMessageError for anything else. */
export function decodeJobMessage(body: string): string {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidJobMessageError('not JSON');
  }
  const issues = issuesOf(json);
  if (issues.length > 0) throw new InvalidJobMessageError(issues.join('; '));
  return (json as { jobId: string }).jobId;
}
