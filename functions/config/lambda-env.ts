/**
 * The environment variables docrelay's Lambda functions read, and the files the construct builds beside each
 * bundle: the contract between the CDK construct that sets them (lib/) and the runtime that reads them
 * (functions/commons/env.ts, functions/mapping/isolate.ts). Constants only.
 */
/** The Lambda environment variables docrelay's functions read. */
export const LAMBDA_ENV = {
  configPath: 'DOCRELAY_CONFIG_PATH',
  tableName: 'DOCRELAY_TABLE',
  queueUrl: 'DOCRELAY_QUEUE_URL',
  dlqUrl: 'DOCRELAY_DLQ_URL',
  bucket: 'DOCRELAY_BUCKET',
  eventBusName: 'DOCRELAY_EVENT_BUS',
  sealingSecretName: 'DOCRELAY_SEALING_SECRET',
  maxReceiveCount: 'DOCRELAY_MAX_RECEIVE_COUNT',
  /** The deployment's name (DocRelayProps.deploymentName): named in every event the worker publishes. */
  deployment: 'DOCRELAY_DEPLOYMENT',
  leaseSeconds: 'DOCRELAY_LEASE_SECONDS',
  /** `true` when the construct turned X-Ray tracing on; anything else leaves the Tracer unloaded. */
  tracing: 'DOCRELAY_TRACING',
  /** Powertools' own settings: the deployment's metric namespace and this function's service name. */
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  serviceName: 'POWERTOOLS_SERVICE_NAME',
} as const;

/**
 * The mapping isolate's own bundle, built beside every function's `index.js` (lib/docrelay-function.ts). Its
 * threads load this small file instead of the whole function bundle (functions/mapping/isolate.ts).
 */
export const MAPPING_ISOLATE_FILE = 'mapping-isolate.js';
