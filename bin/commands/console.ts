/**
 * `docrelay console`: the web console of a deployed stack, on loopback only, acting with the caller's own AWS
 * credentials; the page is the local stack's and its jobs API runs in this process. The mapped data needs
 * the sealing secret's name (--sealing-secret or DOCRELAY_SEALING_SECRET).
 */
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { SecretsManagerSource } from '../../functions/adapters/secrets-manager/secret-source';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { readLocalSettings } from '../../functions/commons/env';
import { createObservability } from '../../functions/commons/observability';
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { makeJobsApiHandler } from '../../functions/handlers/jobs-api/make-handler';
import { buildDocumentService } from '../../functions/wiring/document-service';
import { buildJobsApiDeps } from '../../functions/wiring/jobs-api';
import { consoleRoutes } from '../../local/console/console-routes';
import { sqsDeadLetters } from '../../local/console/dead-letters';
import { type ApiHandler, startApiServer } from '../../local/stack/api-server';
import { lambdaEnvironments } from '../../local/stack/lambda-environments';
import { prefixedSecrets, secretPrefixOf } from './deployed-secrets';
import { loadConfigOrExplain } from './ops-args';
import { readStackOutputs, targetVariables } from './stack-outputs';
import { resolveStackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** What `docrelay console` takes. */
export interface ConsoleOptions {
  readonly stack: string;
  readonly port: number;
  readonly sealingSecret?: string;
}

/** Serves the console until interrupted; resolves to the exit code. */
export async function runConsole(ctx: CommandContext, values: ConsoleOptions): Promise<number> {
  const stackName = values.stack.trim();
  if (stackName === '') throw new CliError('--stack <name> must name a deployed docrelay stack', 2);
  const port = values.port;
  const region = ctx.env.AWS_REGION ?? ctx.env.AWS_DEFAULT_REGION;
  const outputs = await readStackOutputs(stackName, region);
  const variables = targetVariables(stackName, outputs);
  const target = await resolveStackTarget({ ...ctx, env: { ...ctx.env, ...variables } });
  try {
    const settings = readLocalSettings(ctx.env, ctx.cwd);
    const config = await loadConfigOrExplain(settings.configPath);
    const secrets = new SecretsManagerSource(target.clients.secretsManager);
    const sealingSecretName = values.sealingSecret ?? ctx.env[LAMBDA_ENV.sealingSecretName];
    const jobsApiDeps = buildJobsApiDeps({
      dynamodb: target.clients.dynamodb,
      s3: target.clients.s3,
      tableName: target.tableName,
      bucket: target.bucket,
    });
    // Each request in an environment of its own, as on Lambda (local/stack/lambda-environments.ts).
    const jobsApi = lambdaEnvironments(
      () =>
        makeJobsApiHandler(jobsApiDeps, createObservability('console', { logLevel: 'SILENT' })) as ApiHandler,
    );
    const server = await startApiServer(
      {
        jobs: jobsApi.invoke,
        console: consoleRoutes({
          jobs: new DynamoJobRepository(target.clients.dynamodb, target.tableName),
          queue: new SqsJobQueue(target.clients.sqs, target.queueUrl),
          deadLetters: sqsDeadLetters(target.clients.sqs, target.dlqUrl),
          config,
          templates: buildDocumentService(config, prefixedSecrets(secrets, secretPrefixOf(outputs)))
            .templates,
          ...(sealingSecretName === undefined ? {} : { sealingSecret: () => secrets.get(sealingSecretName) }),
          stackLabel: stackName,
        }),
      },
      { port, host: '127.0.0.1' },
    );
    ctx.stdout.write(`docrelay console of stack ${stackName} at ${server.url}/ (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await server.close();
    return 0;
  } finally {
    target.close();
  }
}
