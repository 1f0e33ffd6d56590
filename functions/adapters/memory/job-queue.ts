/** The jobs queue and dead-letter queue in memory, for unit tests: what was sent, with faults on demand. */
import type { DeadLetterQueue, JobQueue, JobQueueBacklog, QueueBacklog } from '../../ports/job-queue';

/** A sent message as the memory queue keeps it. */
export interface MemoryMessage {
  readonly messageId: string;
  readonly jobId?: string;
  readonly body?: string;
  readonly delaySeconds: number;
  readonly reason?: string;
}

/**
 * Records every message; `failNext` makes the next sends throw. Nothing is received from it, so its backlog is
 * whatever a test sets (`held`, empty by default); `failNext` makes the next backlog read throw too.
 */
export class InMemoryJobQueue implements JobQueue, JobQueueBacklog, DeadLetterQueue {
  readonly messages: MemoryMessage[] = [];
  /** What `backlog()` answers. */
  held: QueueBacklog = { visible: 0, inFlight: 0, delayed: 0 };
  private failures: unknown[] = [];
  private counter = 0;

  /** Makes the next `times` sends throw `error`. */
  failNext(error: unknown, times = 1): void {
    for (let i = 0; i < times; i += 1) this.failures.push(error);
  }

  /** The job ids sent so far, in order. */
  get jobIds(): string[] {
    return this.messages.flatMap((m) => (m.jobId === undefined ? [] : [m.jobId]));
  }

  private check(): void {
    if (this.failures.length > 0) throw this.failures.shift();
  }

  private push(message: Omit<MemoryMessage, 'messageId'>): string {
    this.counter += 1;
    const messageId = `memory-${this.counter}`;
    this.messages.push({ messageId, ...message });
    return messageId;
  }

  async send(jobIds: readonly string[]): Promise<void> {
    this.check();
    for (const jobId of jobIds) this.push({ jobId, delaySeconds: 0 });
  }

  async sendDelayed(jobId: string, delaySeconds: number): Promise<string> {
    this.check();
    return this.push({ jobId, delaySeconds });
  }

  async backlog(): Promise<QueueBacklog> {
    this.check();
    return { ...this.held };
  }

  async park(jobIds: readonly string[], reason: string): Promise<void> {
    this.check();
    for (const jobId of jobIds) this.push({ jobId, delaySeconds: 0, reason });
  }

  async parkRaw(body: string, reason: string): Promise<void> {
    this.check();
    this.push({ body, delaySeconds: 0, reason });
  }
}
