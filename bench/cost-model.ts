/**
 * Benchmark 6, the cost model: dollars per 1,000 documents on AWS (us-east-1, arm64 Lambda), from the
 * measured durations and the request counts read from the code. One document = one job from a webhook that
 * makes one job (the worst case: a webhook making two jobs shares its ingest and API Gateway cost).
 */
import { fmt } from './harness';

/**
 * List prices, us-east-1, from the AWS public pricing pages as of mid-2025 (as known to the author; check the
 * pages before quoting a figure). Free tiers are ignored.
 */
export const PRICES = {
  source: 'AWS public pricing pages (us-east-1) as of mid-2025; free tiers ignored',
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  httpApiRequest: 1.0 / 1e6,
  sqsRequest: 0.4 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  s3Put: 0.005 / 1000,
  s3GbMonth: 0.023,
  secretsApiCall: 0.05 / 10_000,
  eventBridgeEvent: 1.0 / 1e6,
} as const;

/** What the model is computed from. */
export interface CostInputs {
  /** Billed duration of one ingest invocation, ms (measured CPU + the AWS round trips it waits for). */
  readonly ingestMs: number;
  readonly ingestMemoryMb: number;
  /** Billed duration of one worker invocation (one job), ms. */
  readonly workerMs: number;
  readonly workerMemoryMb: number;
  /** Average stored file size, bytes (one file per document). */
  readonly fileBytes: number;
  /** Secrets Manager reads per document, with the 5-minute cache (≈ 0 at steady load). */
  readonly secretCallsPerDocument: number;
  /** S3 write requests per file: 1 for a single PUT, 2 + parts for a multipart upload. */
  readonly s3PutsPerFile: number;
  /**
   * DynamoDB request units per document on the table (measured in the end-to-end run from the consumed
   * capacity the calls report, when `measured`), and the index writes on top (never measured: the emulator
   * reports the table's units only; counted from the code, see DYNAMO_INDEX_WRITES_PER_DOCUMENT).
   */
  readonly dynamo: {
    readonly tableWrites: number;
    readonly tableReads: number;
    readonly indexWrites: number;
    readonly measured: boolean;
    /** Whether `indexWrites` was measured (bench/dynamo-writes.ts) rather than counted from the code. */
    readonly indexMeasured?: boolean;
  };
  /** Whether `fileBytes` is the mean of the files the end-to-end run stored (else an assumption). */
  readonly fileBytesMeasured: boolean;
}

/** One line of the model. */
export interface CostLine {
  readonly item: string;
  readonly count: string;
  readonly dollarsPer1000: number;
}

/**
 * DynamoDB request units per document when no run measured them: per stored job of a two-job delivery with a
 * content key, the ingest's transaction (content key, delivery with its ~3 KB sealed payload, jobs; billed
 * twice) 7 WRU, the claim 1, `created` 2, the last file with `stored` 2 (job items pass 1 KB once they hold
 * the sealed links); reads: the delivery's payload and the job. Breakdown: bench/dynamo-writes.ts.
 */
export const DYNAMO_UNITS_PER_DOCUMENT = { writes: 12 + 9.5, reads: 2 } as const;

/**
 * The index writes per document in DYNAMO_UNITS_PER_DOCUMENT: `open-jobs` 4 (the job in at its creation, moved
 * at the claim, whose lease is the sort key, for 2, out when final), `jobs-by-time` 4 (creation and three status
 * changes), `by-delivery` 1.5 (the job and half its delivery).
 */
export const DYNAMO_INDEX_WRITES_PER_DOCUMENT = 4 + 4 + 1.5;

/** SQS requests per document: SendMessageBatch (ingest), ReceiveMessage and DeleteMessageBatch (Lambda's poller). */
export const SQS_REQUESTS_PER_DOCUMENT = 3;

/** The model's lines and total, per 1,000 documents. */
export function costPer1000(inputs: CostInputs): { lines: CostLine[]; total: number } {
  const perDoc = (dollars: number): number => dollars * 1000;
  const gbSeconds = (ms: number, mb: number): number => (Math.ceil(ms) / 1000) * (mb / 1024);
  const lines: CostLine[] = [
    {
      item: 'Lambda ingest (GB-s + request)',
      count: `${fmt(inputs.ingestMs)} ms × ${inputs.ingestMemoryMb} MB (CPU measured; AWS round trips assumed)`,
      dollarsPer1000: perDoc(
        gbSeconds(inputs.ingestMs, inputs.ingestMemoryMb) * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest,
      ),
    },
    {
      item: 'Lambda worker (GB-s + request)',
      count: `${fmt(inputs.workerMs)} ms × ${inputs.workerMemoryMb} MB (measured locally)`,
      dollarsPer1000: perDoc(
        gbSeconds(inputs.workerMs, inputs.workerMemoryMb) * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest,
      ),
    },
    {
      item: 'API Gateway HTTP API',
      count: '1 request (≤ 512 KB)',
      dollarsPer1000: perDoc(PRICES.httpApiRequest),
    },
    {
      item: 'SQS',
      count: `${SQS_REQUESTS_PER_DOCUMENT} requests`,
      dollarsPer1000: perDoc(SQS_REQUESTS_PER_DOCUMENT * PRICES.sqsRequest),
    },
    {
      item: 'DynamoDB on demand',
      count: `${fmt(inputs.dynamo.tableWrites)} WRU + ${fmt(inputs.dynamo.tableReads)} RRU on the table (${inputs.dynamo.measured ? 'measured' : 'assumed'}) + ${fmt(inputs.dynamo.indexWrites)} WRU on the indexes (${inputs.dynamo.indexMeasured === true ? 'measured' : 'assumed'})`,
      dollarsPer1000: perDoc(
        (inputs.dynamo.tableWrites + inputs.dynamo.indexWrites) * PRICES.dynamoWriteUnit +
          inputs.dynamo.tableReads * PRICES.dynamoReadUnit,
      ),
    },
    {
      item: 'S3 PUT requests',
      count: `${inputs.s3PutsPerFile} per file`,
      dollarsPer1000: perDoc(inputs.s3PutsPerFile * PRICES.s3Put),
    },
    {
      item: 'S3 storage, first month',
      count: `${fmt(inputs.fileBytes / 1024)} KB per file (${inputs.fileBytesMeasured ? 'measured' : 'assumed'})`,
      dollarsPer1000: perDoc((inputs.fileBytes / 1024 ** 3) * PRICES.s3GbMonth),
    },
    {
      item: 'Secrets Manager API calls (cached 5 min)',
      count: `${inputs.secretCallsPerDocument} per document (assumed)`,
      dollarsPer1000: perDoc(inputs.secretCallsPerDocument * PRICES.secretsApiCall),
    },
    {
      item: 'EventBridge PutEvents',
      count: '1 event ("Document Stored")',
      dollarsPer1000: perDoc(PRICES.eventBridgeEvent),
    },
  ];
  return { lines, total: lines.reduce((sum, line) => sum + line.dollarsPer1000, 0) };
}
