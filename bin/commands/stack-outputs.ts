/**
 * A deployed stack's CloudFormation outputs, read by its name with the caller's AWS credentials: the table,
 * bucket and queues become the variables of the CLI's AWS target (stack-target.ts), as `console` and `smoke`
 * use them.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { firstLine } from './ops-args';
import { CliError } from './types';

/** The stack outputs the CLI's AWS target needs, and the variable each one fills. */
const TARGET_OUTPUTS: Readonly<Record<string, string>> = {
  TableName: LAMBDA_ENV.tableName,
  BucketName: LAMBDA_ENV.bucket,
  QueueUrl: LAMBDA_ENV.queueUrl,
  DeadLetterQueueUrl: LAMBDA_ENV.dlqUrl,
};

/** Every output of the stack, by key; a one-line CliError when the stack cannot be read. */
export async function readStackOutputs(
  stackName: string,
  region: string | undefined,
): Promise<Record<string, string>> {
  const cloudFormation = new CloudFormationClient(region === undefined ? {} : { region });
  try {
    const answer = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs: Record<string, string> = {};
    for (const output of answer.Stacks?.[0]?.Outputs ?? []) {
      if (output.OutputKey !== undefined && output.OutputValue !== undefined) {
        outputs[output.OutputKey] = output.OutputValue;
      }
    }
    return outputs;
  } catch (error) {
    throw new CliError(`cannot read stack ${stackName}: ${firstLine(error)}`);
  } finally {
    cloudFormation.destroy();
  }
}

/** The AWS target's variables from the outputs; a stack without them is not a docrelay stack. */
export function targetVariables(
  stackName: string,
  outputs: Readonly<Record<string, string>>,
): Record<string, string> {
  const missing = Object.keys(TARGET_OUTPUTS).filter((key) => outputs[key] === undefined);
  if (missing.length > 0) {
    throw new CliError(`stack ${stackName} has no output ${missing.join(', ')}: is it a docrelay stack?`);
  }
  return Object.fromEntries(
    Object.entries(TARGET_OUTPUTS).map(([key, variable]) => [variable, outputs[key] as string]),
  );
}
