/** docrelay's CDK constructs, for use from other CDK apps (the package's entry point). */

// The configuration's loader and types, so an app can read the YAML file with docrelay's located messages.
export { loadConfigFileSync, type ParseConfigOptions, parseConfig } from '../functions/config/load';
export type { DocrelayConfig, DocrelayConfigInput } from '../functions/config/schema';
export * from './docrelay';
export * from './docrelay-app';
export * from './docrelay-function';
export * from './docrelay-monitoring';
export * from './docrelay-stack';
