/**
 * Where the operational commands (jobs, replay, dlq, put-event) find docrelay's table and queues: on AWS when
 * the user sets the variables the Lambda functions read (the stack's outputs), else the running local stack's
 * `endpoints.json`. The one place that decides it, so every command targets the same stack the same way.
 */
import { type AwsClients, createAwsClients } from '../../functions/adapters/aws-clients';
import { readLocalSettings } from '../../functions/commons/env';
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { LOCAL_CREDENTIALS, readEndpoints, stackRunning } from '../../local/state-files';
import { CliError, type CommandContext } from './types';

/** The stack a command works on, with AWS clients pointed at it. Call `close()` when done. */
export interface StackTarget {
  /** `aws`: a deployed stack (variables set); `local`: the stack `npm start` runs. */
  readonly kind: 'local' | 'aws';
  readonly clients: AwsClients;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly bucket: string;
  /** Base URL of the local HTTP API (local stack only). */
  readonly apiUrl?: string;
  /** EventBridge bus name or ARN for put-event on AWS (DOCRELAY_EVENT_BUS); the default bus when absent. */
  readonly eventBusName?: string;
  /** Region of the stack, when known without the SDK's chain. */
  readonly region?: string;
  /** Releases the clients' sockets. */
  close(): void;
}

/** The variables that point the CLI at a deployed stack (the same the Lambda functions read). */
export const AWS_TARGET_VARIABLES = [
  LAMBDA_ENV.tableName,
  LAMBDA_ENV.queueUrl,
  LAMBDA_ENV.dlqUrl,
  LAMBDA_ENV.bucket,
] as const;

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

/** The region in an SQS queue URL (`https://sqs.<region>.amazonaws.com/...`), if it names one. */
export function regionOfQueueUrl(queueUrl: string): string | undefined {
  try {
    const host = new URL(queueUrl).hostname;
    return /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(host)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Resolves the stack: AWS when any of DOCRELAY_TABLE, DOCRELAY_QUEUE_URL, DOCRELAY_DLQ_URL, DOCRELAY_BUCKET is
 * set (then all must be; region and credentials from the AWS SDK's usual chain), else the local stack found
 * through `<DOCRELAY_DATA_DIR>/endpoints.json`; otherwise a one-line CliError saying what to do.
 */
export async function resolveStackTarget(ctx: Pick<CommandContext, 'env' | 'cwd'>): Promise<StackTarget> {
  const set = AWS_TARGET_VARIABLES.filter((name) => nonEmpty(ctx.env[name]) !== undefined);
  if (set.length > 0) {
    const missing = AWS_TARGET_VARIABLES.filter((name) => nonEmpty(ctx.env[name]) === undefined);
    if (missing.length > 0) {
      throw new CliError(
        `to target a deployed stack set ${AWS_TARGET_VARIABLES.join(', ')} (the stack's outputs); missing: ${missing.join(', ')}`,
      );
    }
    const value = (name: string): string => nonEmpty(ctx.env[name]) as string;
    const queueUrl = value(LAMBDA_ENV.queueUrl);
    const region =
      nonEmpty(ctx.env.AWS_REGION) ?? nonEmpty(ctx.env.AWS_DEFAULT_REGION) ?? regionOfQueueUrl(queueUrl);
    const clients = createAwsClients(region === undefined ? {} : { region });
    const eventBusName = nonEmpty(ctx.env[LAMBDA_ENV.eventBusName]);
    return {
      kind: 'aws',
      clients,
      tableName: value(LAMBDA_ENV.tableName),
      queueUrl,
      dlqUrl: value(LAMBDA_ENV.dlqUrl),
      bucket: value(LAMBDA_ENV.bucket),
      ...(eventBusName === undefined ? {} : { eventBusName }),
      ...(region === undefined ? {} : { region }),
      close: () => destroyClients(clients),
    };
  }

  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const endpoints = await readEndpoints(settings.dataDir);
  const aws = endpoints?.aws;
  if (endpoints === undefined || aws === undefined || !stackRunning(endpoints)) {
    throw new CliError(
      `no local stack is running for ${settings.dataDir}: start it with npm start (or set ${AWS_TARGET_VARIABLES.join(', ')} to use a deployed stack)`,
    );
  }
  const clients = createAwsClients({
    region: aws.region,
    credentials: LOCAL_CREDENTIALS,
    endpoints: { s3: aws.s3, sqs: aws.sqs, dynamodb: aws.dynamodb },
  });
  return {
    kind: 'local',
    clients,
    tableName: aws.table,
    queueUrl: aws.queueUrl,
    dlqUrl: aws.dlqUrl,
    bucket: aws.bucket,
    region: aws.region,
    ...(endpoints.api === undefined ? {} : { apiUrl: endpoints.api }),
    close: () => destroyClients(clients),
  };
}

/** The running local stack's API base URL, or undefined when none runs for this data directory. */
export async function localApiUrl(ctx: Pick<CommandContext, 'env' | 'cwd'>): Promise<string | undefined> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const endpoints = await readEndpoints(settings.dataDir);
  return endpoints?.api !== undefined && stackRunning(endpoints) ? endpoints.api : undefined;
}

function destroyClients(clients: AwsClients): void {
  for (const client of Object.values(clients)) client.destroy();
}
