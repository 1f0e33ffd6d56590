/** Publishes `Document Stored` and `Document Failed` events (source `docrelay`) to EventBridge. */
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type DocrelayEventType, EVENT_SOURCE, type EventPublisher } from '../../ports/event-publisher';

/**
 * Publishes to an EventBridge bus (the default bus when none is named). With a deployment name, every event's
 * detail says which deployment sent it (`deployment`), so consumers of a bus shared by stages tell them apart.
 */
export class EventBridgePublisher implements EventPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName?: string,
    private readonly deployment?: string,
  ) {}

  async publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void> {
    const result = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: EVENT_SOURCE,
            DetailType: detailType,
            Detail: JSON.stringify(
              this.deployment === undefined ? detail : { ...detail, deployment: this.deployment },
            ),
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
