/**
 * The SQS wire format of a job message, known only to this adapter. A message names the job only: the
 * payload rests sealed in the delivery record (the outbox), so a message can always be sent again (by the
 * sender's retry, the reconciler or a replay) and is small whatever the webhook's size.
 */
import * as z from 'zod/mini';
import { DocrelayError } from '../../commons/errors';

/** Schema of a job message: validated on receipt, never trusted as a cast. */
const jobMessageSchema = z.strictObject({
  v: z.literal(1),
  jobId: z.string().check(z.minLength(1), z.maxLength(64)),
});

/** A message that is not a job message (poison): it can never succeed. */
export class InvalidJobMessageError extends DocrelayError {
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
  const result = jobMessageSchema.safeParse(json);
  if (!result.success) {
    throw new InvalidJobMessageError(
      result.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; '),
    );
  }
  return result.data.jobId;
}
