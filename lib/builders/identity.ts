/**
 * A deployment's identity: the name that tells two docrelay deployments in one account apart. Metrics,
 * Powertools service names, the config secrets' names (imported or created) and the HTTP API's name derive from it.
 */
import { Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DocRelayFunctionName } from '../docrelay-function';

/** The names one deployment uses for itself. */
export interface DeploymentIdentity {
  /** The deployment's name (the stack name unless given). */
  readonly name: string;
  /** CloudWatch namespace of the functions' EMF metrics (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** The Powertools service (the metrics' `service` dimension) of one function. */
  serviceName(fn: DocRelayFunctionName): string;
  /** The prefix of every config secret's Secrets Manager name (`<name>/` unless given; '' when shared). */
  readonly secretPrefix: string;
  /** The Secrets Manager name of a config secret (imported or created), from the name the config gives it. */
  secretName(logicalName: string): string;
}

/** Letters, digits and hyphens: valid in a metric namespace, a secret name and an API name alike. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;

/** What Secrets Manager allows in a name: letters, digits and /_+=.@- (empty: no prefix). */
const SECRET_PREFIX = /^[A-Za-z0-9/_+=.@-]{0,256}$/;

/** Deployment names already taken, per stack: two DocRelay constructs in one stack need distinct ones. */
const taken = new WeakMap<Stack, Set<string>>();

/**
 * The identity of the deployment `scope` belongs to; throws when the name or secret prefix is unusable or the
 * name already taken.
 */
export function deploymentIdentity(
  scope: Construct,
  given?: string,
  givenSecretPrefix?: string,
): DeploymentIdentity {
  const stack = Stack.of(scope);
  const name = given ?? stack.stackName;
  if (Token.isUnresolved(name) || !NAME.test(name)) {
    throw new Error(
      `DocRelay: the deployment name must be 1 to 64 letters, digits and hyphens known at synth, got ${Token.isUnresolved(name) ? 'an unresolved token' : JSON.stringify(name)}; pass deploymentName`,
    );
  }
  const names = taken.get(stack) ?? new Set<string>();
  taken.set(stack, names);
  if (names.has(name)) {
    throw new Error(
      `DocRelay: deployment name ${name} is already used in stack ${stack.stackName}; give each DocRelay its own deploymentName`,
    );
  }
  const secretPrefix = givenSecretPrefix ?? `${name}/`;
  if (Token.isUnresolved(secretPrefix) || !SECRET_PREFIX.test(secretPrefix)) {
    throw new Error(
      `DocRelay: secretPrefix must be known at synth and hold only letters, digits and /_+=.@-, got ${Token.isUnresolved(secretPrefix) ? 'an unresolved token' : JSON.stringify(secretPrefix)}`,
    );
  }
  names.add(name);
  return {
    name,
    metricsNamespace: `docrelay/${name}`,
    serviceName: (fn) => `${name}-${fn}`,
    secretPrefix,
    secretName: (logicalName) => `${secretPrefix}${logicalName}`,
  };
}
