/**
 * Publishes `Document Stored` and `Document Failed` events (source `docrelay`). On AWS they go to
 * EventBridge; the local stack appends them to a JSON-lines file in its data directory, since no
 * EventBridge emulator runs there. Events carry ids, keys and reasons, never a secret or a payload.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

/** The `source` of every docrelay event. */
export const EVENT_SOURCE = 'docrelay';

/** The kinds of event docrelay publishes. */
export type DocrelayEventType = 'Document Stored' | 'Document Failed';

/** Publishes docrelay's events. */
export interface EventPublisher {
  publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void>;
}

/** Publishes to an EventBridge bus (the default bus when none is named). */
export class EventBridgePublisher implements EventPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName?: string,
  ) {}

  async publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void> {
    const result = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: EVENT_SOURCE,
            DetailType: detailType,
            Detail: JSON.stringify(detail),
            ...(this.busName === undefined ? {} : { EventBusName: this.busName }),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) {
      throw new Error(
        `EventBridge refused the ${detailType} event: ${result.Entries?.[0]?.ErrorCode ?? 'unknown'}`,
      );
    }
  }
}

/** Appends events as JSON lines to a file (the local stack's stand-in for EventBridge). */
export class FileEventPublisher implements EventPublisher {
  constructor(private readonly file: string) {}

  async publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const event = { source: EVENT_SOURCE, 'detail-type': detailType, time: new Date().toISOString(), detail };
    await appendFile(this.file, `${JSON.stringify(event)}\n`);
  }
}
