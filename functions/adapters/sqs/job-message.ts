/**
 * The SQS message that hands one job to the worker. It names the job only: the payload rests sealed in the
 * delivery record (the transactional outbox), so a message can always be sent again, by the sender's retry,
 * the reconciler or a replay, and is small whatever the webhook's size.
 */
import { z } from 'zod';
import { DocrelayError } from '../../commons/errors';

/** Schema of a job message: validated on receipt, never trusted as a cast. */
export const jobMessageSchema = z.strictObject({
  v: z.literal(1),
  jobId: z.string().min(1).max(64),
});

/** A job message. */
export type JobMessage = z.infer<typeof jobMessageSchema>;

/** A message that is not a job message (poison): it can never succeed. */
export class InvalidJobMessageError extends DocrelayError {
  constructor(issues: string) {
    super('INVALID_JOB_MESSAGE', `the queue message is not a job message: ${issues}`);
  }
}

/** Parses and validates a message body. */
export function parseJobMessage(body: string): JobMessage {
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
  return result.data;
}
