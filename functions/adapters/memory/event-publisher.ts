/** Events in memory, for unit tests. */
import type { DocrelayEventType, EventPublisher } from '../../ports/event-publisher';

/** Keeps every published event; `failNext` makes the next publish throw. */
export class InMemoryEventPublisher implements EventPublisher {
  readonly events: Array<{ type: DocrelayEventType; detail: Record<string, unknown> }> = [];
  private failures: unknown[] = [];

  failNext(error: unknown): void {
    this.failures.push(error);
  }

  async publish(type: DocrelayEventType, detail: Record<string, unknown>): Promise<void> {
    if (this.failures.length > 0) throw this.failures.shift();
    this.events.push({ type, detail: structuredClone(detail) });
  }
}
