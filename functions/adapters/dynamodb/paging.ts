/**
 * The job store's bounded request loops: one generator that pages a Query or a Scan, and the retry of what a
 * batch request left unprocessed.
 */
import {
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { JobStoreError } from './errors';

/** One page of a Query or Scan: its items, and the key to go on after (absent on the last page). */
export interface Page {
  readonly items: Record<string, unknown>[];
  readonly lastKey?: Record<string, unknown>;
}

/** A Query (`query`) or a Scan (`scan`) input, without its start key. */
export type PagedRequest =
  | { readonly query: Omit<QueryCommandInput, 'ExclusiveStartKey'> }
  | { readonly scan: Omit<ScanCommandInput, 'ExclusiveStartKey'> };

/**
 * Pages through a Query or Scan from `startKey`, at most `maxPages` requests; stops after the last page (the
 * caller may stop earlier by leaving the loop). An error is a JobStoreError for `operation`.
 */
export async function* pages(
  ddb: DynamoDBDocumentClient,
  request: PagedRequest,
  operation: string,
  maxPages: number,
  startKey?: Record<string, unknown>,
): AsyncGenerator<Page> {
  let key = startKey;
  for (let page = 0; page < maxPages; page += 1) {
    const from = key === undefined ? {} : { ExclusiveStartKey: key };
    let result: { Items?: Record<string, unknown>[]; LastEvaluatedKey?: Record<string, unknown> };
    try {
      result = await ddb.send(
        'query' in request
          ? new QueryCommand({ ...request.query, ...from })
          : new ScanCommand({ ...request.scan, ...from }),
      );
    } catch (error) {
      throw new JobStoreError(operation, error);
    }
    key = result.LastEvaluatedKey;
    yield { items: result.Items ?? [], ...(key === undefined ? {} : { lastKey: key }) };
    if (key === undefined) return;
  }
}

/** Requests per batch before unprocessed items count as a failure, and the first backoff between them. */
const BATCH_ROUNDS = 5;
const BATCH_BACKOFF_MS = 25;
const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Runs one batch request and then again with what DynamoDB left unprocessed (throttling), backing off, at most
 * BATCH_ROUNDS times; what is still left after that, or any error, is a JobStoreError for `operation`.
 */
export async function inRounds<T>(
  items: T[],
  operation: string,
  send: (items: T[]) => Promise<T[]>,
): Promise<void> {
  let left = items;
  for (let round = 0; left.length > 0; round += 1) {
    if (round === BATCH_ROUNDS) throw new JobStoreError(operation, new Error('items left unprocessed'));
    if (round > 0) await delay(BATCH_BACKOFF_MS * 2 ** round);
    try {
      left = await send(left);
    } catch (error) {
      throw new JobStoreError(operation, error);
    }
  }
}
