/**
 * The CDK app: `npx cdk synth|deploy [-c config=PATH] [-c stackName=NAME] [-c createSecrets=true]`.
 * A broken configuration stops synth with its located problems (as `docrelay check --offline` prints them)
 * and exit code 1.
 */
import { App } from 'aws-cdk-lib';
import { ConfigError, ConfigFileError } from '../functions/config/errors';
import { addDocRelayStack, appOptionsFromContext } from '../lib/docrelay-app';

const app = new App();
try {
  addDocRelayStack(app, appOptionsFromContext(app));
  app.synth();
} catch (error) {
  // The user's to fix: the problems alone, without a stack trace.
  if (!(error instanceof ConfigError || error instanceof ConfigFileError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
