/**
 * A small deployer of a synthesized CloudFormation template onto moto: the queues, table, buckets, secrets
 * and event buses are created from their template properties (CloudFormation's own physical names, since
 * docrelay's template names none), and `Ref`/`Fn::GetAtt`/`Fn::Join` resolve to what was created. Other
 * resource types (IAM, Lambda, API, alarms) have no runtime effect the bundles can observe and are skipped.
 */
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, type DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, type EventBridgeClient } from '@aws-sdk/client-eventbridge';
import {
  CreateBucketCommand,
  PutBucketEncryptionCommand,
  PutBucketVersioningCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { CreateSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A CloudFormation template, as far as the deployer reads it. */
export interface Template {
  readonly Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

/** The clients the deployer creates resources with. */
export interface DeployClients {
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  readonly secretsManager: SecretsManagerClient;
  readonly eventBridge: EventBridgeClient;
}

/** A created resource: what `Ref` gives and its `Fn::GetAtt` attributes. */
interface Deployed {
  readonly ref: string;
  readonly attributes: Record<string, string>;
}

/** The deployed stack: resolves template values to what was created. */
export interface DeployedStack {
  resolve(value: unknown): unknown;
  /** The `Ref` of a created resource by logical id. */
  ref(logicalId: string): string;
}

/** Deploys the template's data resources onto the clients' endpoint. */
export async function deployTemplate(
  template: Template,
  clients: DeployClients,
  options: { stackName: string; region: string; accountId: string },
): Promise<DeployedStack> {
  const deployed = new Map<string, Deployed>();
  const pending = new Map<string, Promise<Deployed>>();
  const pseudo: Record<string, string> = {
    'AWS::Region': options.region,
    'AWS::AccountId': options.accountId,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': options.stackName,
  };
  // CloudFormation's physical names: <stack>-<logical id>-<random suffix>.
  const physicalName = (logicalId: string, max: number): string =>
    `${options.stackName}-${logicalId}`.slice(0, max - 13) + `-${randomBytes(6).toString('hex')}`;

  const creators: Record<string, (id: string, props: Record<string, unknown>) => Promise<Deployed>> = {
    'AWS::SQS::Queue': async (id, props) => {
      const attributes: Record<string, string> = {};
      for (const [key, value] of Object.entries(props)) {
        if (key === 'QueueName' || key === 'Tags') continue;
        attributes[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
      }
      const name = (props.QueueName as string | undefined) ?? physicalName(id, 80);
      const { QueueUrl } = await clients.sqs.send(
        new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
      );
      const arn = (
        await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))
      ).Attributes?.QueueArn;
      return {
        ref: QueueUrl as string,
        attributes: { Arn: arn as string, QueueName: name, QueueUrl: QueueUrl as string },
      };
    },
    'AWS::DynamoDB::Table': async (id, props) => {
      const name = (props.TableName as string | undefined) ?? physicalName(id, 255);
      const answer = await clients.dynamodb.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: props.KeySchema as never,
          AttributeDefinitions: props.AttributeDefinitions as never,
          GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as never,
          BillingMode: (props.BillingMode as never) ?? 'PROVISIONED',
        }),
      );
      const ttl = props.TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined;
      if (ttl !== undefined) {
        await clients.dynamodb.send(
          new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: ttl }),
        );
      }
      return { ref: name, attributes: { Arn: answer.TableDescription?.TableArn as string } };
    },
    'AWS::S3::Bucket': async (id, props) => {
      const name = ((props.BucketName as string | undefined) ?? physicalName(id, 63)).toLowerCase();
      await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
      const versioning = props.VersioningConfiguration as { Status: 'Enabled' | 'Suspended' } | undefined;
      if (versioning !== undefined) {
        await clients.s3.send(
          new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: versioning }),
        );
      }
      const encryption = props.BucketEncryption as
        | { ServerSideEncryptionConfiguration: Array<{ ServerSideEncryptionByDefault: unknown }> }
        | undefined;
      if (encryption !== undefined) {
        // CloudFormation's ServerSideEncryptionByDefault is the API's ApplyServerSideEncryptionByDefault.
        const rules = encryption.ServerSideEncryptionConfiguration.map((rule) => ({
          ApplyServerSideEncryptionByDefault: rule.ServerSideEncryptionByDefault as never,
        }));
        await clients.s3.send(
          new PutBucketEncryptionCommand({
            Bucket: name,
            ServerSideEncryptionConfiguration: { Rules: rules },
          }),
        );
      }
      return {
        ref: name,
        attributes: { Arn: `arn:aws:s3:::${name}`, DomainName: `${name}.s3.amazonaws.com` },
      };
    },
    'AWS::SecretsManager::Secret': async (id, props) => {
      const name = (props.Name as string | undefined) ?? physicalName(id, 256);
      const generate = props.GenerateSecretString as { PasswordLength?: number } | undefined;
      const value =
        (props.SecretString as string | undefined) ??
        randomBytes(generate?.PasswordLength ?? 32)
          .toString('base64url')
          .slice(0, generate?.PasswordLength ?? 32);
      const { ARN } = await clients.secretsManager.send(
        new CreateSecretCommand({ Name: name, SecretString: value }),
      );
      return { ref: ARN as string, attributes: { Id: ARN as string } };
    },
    'AWS::Events::EventBus': async (_id, props) => {
      const name = props.Name as string;
      const { EventBusArn } = await clients.eventBridge.send(new CreateEventBusCommand({ Name: name }));
      return { ref: name, attributes: { Arn: EventBusArn as string, Name: name } };
    },
  };

  const deploy = (logicalId: string): Promise<Deployed> => {
    const known = pending.get(logicalId);
    if (known !== undefined) return known;
    const resource = template.Resources[logicalId];
    const create = resource === undefined ? undefined : creators[resource.Type];
    if (resource === undefined || create === undefined) {
      throw new Error(`the deployer cannot create ${logicalId} (${resource?.Type ?? 'not in the template'})`);
    }
    const promise = (async () => {
      const props = (await resolveDeep(resource.Properties ?? {})) as Record<string, unknown>;
      const created = await create(logicalId, props);
      deployed.set(logicalId, created);
      return created;
    })();
    pending.set(logicalId, promise);
    return promise;
  };

  // Resolves intrinsic functions, deploying what they reference first.
  const resolveDeep = async (value: unknown): Promise<unknown> => {
    if (Array.isArray(value)) return Promise.all(value.map(resolveDeep));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    const [key, arg] = entries[0] ?? [];
    if (entries.length === 1 && key === 'Ref') {
      const name = arg as string;
      return pseudo[name] ?? (await deploy(name)).ref;
    }
    if (entries.length === 1 && key === 'Fn::GetAtt') {
      const [id, attribute] = arg as [string, string];
      const found = (await deploy(id)).attributes[attribute];
      if (found === undefined) throw new Error(`the deployer has no ${id}.${attribute}`);
      return found;
    }
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = arg as [string, unknown[]];
      return ((await resolveDeep(parts)) as unknown[]).join(separator);
    }
    const out: Record<string, unknown> = {};
    for (const [name, inner] of entries) out[name] = await resolveDeep(inner);
    return out;
  };

  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (creators[resource.Type] !== undefined) await deploy(logicalId);
  }

  const resolveSync = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolveSync);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    const [key, arg] = entries[0] ?? [];
    const created = (id: string): Deployed => {
      const found = deployed.get(id);
      if (found === undefined) throw new Error(`${id} was not deployed`);
      return found;
    };
    if (entries.length === 1 && key === 'Ref') return pseudo[arg as string] ?? created(arg as string).ref;
    if (entries.length === 1 && key === 'Fn::GetAtt') {
      const [id, attribute] = arg as [string, string];
      return created(id).attributes[attribute];
    }
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = arg as [string, unknown[]];
      return (resolveSync(parts) as unknown[]).join(separator);
    }
    return Object.fromEntries(entries.map(([name, inner]) => [name, resolveSync(inner)]));
  };
  return {
    resolve: resolveSync,
    ref: (logicalId) => {
      const found = deployed.get(logicalId);
      if (found === undefined) throw new Error(`${logicalId} was not deployed`);
      return found.ref;
    },
  };
}
