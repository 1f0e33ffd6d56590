/** docrelay's CDK constructs, for use from other CDK apps. */
export * from './docrelay';
export * from './docrelay-app';
export * from './docrelay-function';
export * from './docrelay-monitoring';
export * from './docrelay-stack';
