/**
 * The ports in front of the jobs queue and its dead-letter queue. A message names one job; its wire format
 * is the queue adapter's business (functions/adapters/sqs/job-message.ts).
 */

/** The jobs queue, as the core uses it. */
export interface JobQueue {
  /** Sends one message per job; throws a retryable error unless every one was accepted. */
  send(jobIds: readonly string[]): Promise<void>;
  /**
   * Sends one message that becomes visible after `delaySeconds` (0..900) and resolves to its id. A fresh
   * message starts its receive count over (the worker sends one to wait out a service outage).
   */
  sendDelayed(jobId: string, delaySeconds: number): Promise<string>;
}

/** Messages a queue holds now, as the queue counts them (approximate on SQS). */
export interface QueueBacklog {
  /** Waiting to be received. */
  readonly visible: number;
  /** Received and not yet deleted (being worked on, or deferred by a worker). */
  readonly inFlight: number;
  /** Sent with a delay that has not passed yet. */
  readonly delayed: number;
}

/**
 * How much the jobs queue holds: what tells the reconciler a job that is only waiting behind busy workers
 * (the queue still holds messages) from one whose message is gone (an empty queue).
 */
export interface JobQueueBacklog {
  backlog(): Promise<QueueBacklog>;
}

/** The dead-letter queue: where failed jobs and poison messages are parked for a person, with a reason. */
export interface DeadLetterQueue {
  /** Parks the jobs' messages with the reason (an error code). */
  park(jobIds: readonly string[], reason: string): Promise<void>;
  /** Parks a message body that is not a job message, as it came. */
  parkRaw(body: string, reason: string): Promise<void>;
}
