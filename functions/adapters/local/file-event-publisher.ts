/**
 * Events locally: appended as JSON lines to a file in the data directory, since no EventBridge emulator runs
 * there. The same shape EventBridge delivers (`source`, `detail-type`, `time`, `detail`).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type DocrelayEventType, EVENT_SOURCE, type EventPublisher } from '../../ports/event-publisher';

/** Appends events as JSON lines to a file (the local stack's stand-in for EventBridge). */
export class FileEventPublisher implements EventPublisher {
  constructor(private readonly file: string) {}

  async publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const event = { source: EVENT_SOURCE, 'detail-type': detailType, time: new Date().toISOString(), detail };
    await appendFile(this.file, `${JSON.stringify(event)}\n`);
  }
}
