/**
 * Builds the docrelay CDK app from a configuration file: the file is validated first, so a broken config
 * fails synth with the located messages of `docrelay check --offline`; then the stack is added, with
 * cdk-nag's AwsSolutions checks as a validation plugin.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { LoadedConfig } from '../functions/config/compile';
import { ConfigFileError } from '../functions/config/errors';
import { type ParseConfigOptions, parseConfig } from '../functions/config/load';
import type { JobTableIndexName } from './builders/table';
import { DocRelayStack } from './docrelay-stack';

/** The configuration file used when `-c config=PATH` is not given. */
export const DEFAULT_CONFIG_PATH = 'config/docrelay.yaml';

/** The stack name used when `-c stackName=NAME` is not given. */
export const DEFAULT_STACK_NAME = 'DocRelay';

/** Options of `addDocRelayStack`; the CDK app reads them from context (`-c key=value`). */
export interface DocRelayAppOptions {
  /** Path of the YAML configuration, relative to `cwd`. @default DEFAULT_CONFIG_PATH */
  readonly configPath?: string;
  /** Stack name (and id). @default DEFAULT_STACK_NAME */
  readonly stackName?: string;
  /** Create the config's secrets with placeholders instead of importing them. @default false */
  readonly createSecrets?: boolean;
  /** Read the config's secrets by their names unprefixed, shared with other deployments (secretPrefix ''). @default false */
  readonly sharedSecrets?: boolean;
  /** GSIs of the job table left out for a staged upgrade (DocRelayProps.omitTableIndexes). @default none */
  readonly omitTableIndexes?: readonly JobTableIndexName[];
  /** X-Ray active tracing of the functions (DocRelayProps.tracing). @default false */
  readonly tracing?: boolean;
  /** Source maps for the functions' stack traces (DocRelayProps.sourceMaps). @default false */
  readonly sourceMaps?: boolean;
  /** Base directory of `configPath`. @default process.cwd() */
  readonly cwd?: string;
}

/**
 * Reads the app options from the app's context
 * (`-c config=… -c stackName=… -c createSecrets=true -c sharedSecrets=true -c omitTableIndexes=a,b
 * -c tracing=true -c sourceMaps=true`).
 */
export function appOptionsFromContext(app: App): DocRelayAppOptions {
  const text = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const flag = (key: string): boolean => {
    const value: unknown = app.node.tryGetContext(key);
    return value === true || value === 'true';
  };
  return {
    configPath: text('config') ?? DEFAULT_CONFIG_PATH,
    stackName: text('stackName') ?? DEFAULT_STACK_NAME,
    createSecrets: flag('createSecrets'),
    sharedSecrets: flag('sharedSecrets'),
    ...(text('omitTableIndexes') === undefined
      ? {}
      : {
          omitTableIndexes: (text('omitTableIndexes') ?? '')
            .split(',')
            .map((name) => name.trim())
            .filter((name) => name !== '') as JobTableIndexName[],
        }),
    tracing: flag('tracing'),
    sourceMaps: flag('sourceMaps'),
  };
}

/** Validates the config file and adds the docrelay stack, with cdk-nag's AwsSolutions checks, to `app`. */
export function addDocRelayStack(app: App, options: DocRelayAppOptions = {}): DocRelayStack {
  const configPath = options.configPath ?? DEFAULT_CONFIG_PATH;
  const loaded = readConfig(resolve(options.cwd ?? process.cwd(), configPath), configPath);
  const stackName = options.stackName ?? DEFAULT_STACK_NAME;
  const stack = new DocRelayStack(app, stackName, {
    stackName,
    docRelay: {
      config: loaded.config,
      configSource: configPath,
      createSecrets: options.createSecrets ?? false,
      ...(options.sharedSecrets === true ? { secretPrefix: '' } : {}),
      ...(options.omitTableIndexes === undefined ? {} : { omitTableIndexes: options.omitTableIndexes }),
      tracing: options.tracing ?? false,
      sourceMaps: options.sourceMaps ?? false,
    },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}

/**
 * Reads and validates the config file, labelled with the path as the user gave it (so the messages are the
 * lines `docrelay check --offline` prints). Throws ConfigError (every problem, located) or ConfigFileError.
 */
function readConfig(path: string, label: string, options: ParseConfigOptions = {}): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigFileError(label, error);
  }
  return parseConfig(text, label, options);
}
