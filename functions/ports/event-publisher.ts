/** The port for docrelay's own events (`Document Stored`, `Document Failed`). */

/** The `source` of every docrelay event. */
export const EVENT_SOURCE = 'docrelay';

/** The kinds of event docrelay publishes. */
export type DocrelayEventType = 'Document Stored' | 'Document Failed';

/** Publishes docrelay's events. They carry ids, keys and reasons, never a secret or a payload. */
export interface EventPublisher {
  publish(detailType: DocrelayEventType, detail: Record<string, unknown>): Promise<void>;
}
