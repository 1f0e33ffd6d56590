/**
 * The HTTP API on an access-logged stage: an `ANY` route per integration (the ingest answers other methods
 * than POST 405, as locally), each with its own throttle so one noisy sender cannot use up another's, any
 * other path a 404 from API Gateway; and the IAM-authorized read routes.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  DomainName,
  HttpApi,
  type HttpApiProps,
  HttpMethod,
  type HttpRoute,
  type HttpStage,
  LogGroupLogDestination,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayv2DomainProperties } from 'aws-cdk-lib/aws-route53-targets';
import type { Construct } from 'constructs';
import type { DocRelayDomainProps } from '../docrelay-props';
import { acknowledge } from './nag';

/** The default API throttling. */
export const DEFAULT_THROTTLE: Required<ThrottleSettings> = { rateLimit: 50, burstLimit: 100 };

/** Inputs of `buildHttpApi`. */
export interface HttpApiOptions {
  /** The API's name (one per deployment). */
  readonly apiName: string;
  readonly ingestFunction: IFunction;
  readonly jobsApiFunction: IFunction;
  /** The integrations that take webhooks, each with its own throttle when the config gives one. */
  readonly hooks: ReadonlyArray<{ readonly id: string; readonly throttle?: ThrottleSettings }>;
  /** Every route's limits unless its integration gives its own. @default DEFAULT_THROTTLE */
  readonly throttle?: ThrottleSettings;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy?: RemovalPolicy;
  readonly apiProps?: Pick<HttpApiProps, 'description' | 'disableExecuteApiEndpoint' | 'corsPreflight'>;
  readonly domain?: DocRelayDomainProps;
}

/** The API, its stage, access logs and routes. */
export interface DocRelayHttpApi {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;
  /** `ANY /v1/hooks/<id>`, by integration id. */
  readonly webhookRoutes: ReadonlyMap<string, HttpRoute>;
  readonly jobsRoute: HttpRoute;
  /** `GET /v1/jobs` (IAM-authorized): jobs newest first. */
  readonly jobListRoute: HttpRoute;
  /** `GET /v1/deliveries/{deliveryId}` (IAM-authorized): a delivery and its jobs. */
  readonly deliveryRoute: HttpRoute;
  /** The custom domain, when one was given. */
  readonly domainName?: DomainName;
  /** The base URL senders use: the custom domain's, else the execute-api address. */
  readonly endpoint: string;
}

/** The access log line: one JSON object per request. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    method: '$context.httpMethod',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    responseLength: '$context.responseLength',
    latency: '$context.responseLatency',
    integrationStatus: '$context.integrationStatus',
    integrationError: '$context.integrationErrorMessage',
    caller: '$context.identity.userArn',
  }),
);

/** Creates the API with its `$default` stage, the webhook routes and the read routes. */
export function buildHttpApi(scope: Construct, options: HttpApiOptions): DocRelayHttpApi {
  if (options.apiProps?.disableExecuteApiEndpoint === true && options.domain === undefined) {
    throw new Error(
      'DocRelay: apiProps.disableExecuteApiEndpoint needs a custom domain (props.domain): without one the API has no address',
    );
  }
  const domainName =
    options.domain === undefined
      ? undefined
      : new DomainName(scope, 'ApiDomain', {
          domainName: options.domain.domainName,
          certificate: options.domain.certificate,
        });
  const api = new HttpApi(scope, 'Api', {
    description: 'docrelay: webhooks in, documents in S3',
    ...options.apiProps,
    apiName: options.apiName,
    // The stage is created below, with throttling and access logs.
    createDefaultStage: false,
  });
  const accessLogGroup = new LogGroup(scope, 'ApiAccessLogs', {
    retention: options.logRetention,
    ...(options.logRemovalPolicy === undefined ? {} : { removalPolicy: options.logRemovalPolicy }),
  });
  const throttle = {
    rateLimit: options.throttle?.rateLimit ?? DEFAULT_THROTTLE.rateLimit,
    burstLimit: options.throttle?.burstLimit ?? DEFAULT_THROTTLE.burstLimit,
  };
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    // The default route settings: each route gets these limits of its own (API Gateway keeps one bucket per route).
    throttle,
    accessLogSettings: { destination: new LogGroupLogDestination(accessLogGroup), format: ACCESS_LOG_FORMAT },
    ...(domainName === undefined ? {} : { domainMapping: { domainName } }),
  });
  if (domainName !== undefined && options.domain?.hostedZone !== undefined) {
    new ARecord(scope, 'ApiDomainRecord', {
      zone: options.domain.hostedZone,
      recordName: options.domain.domainName,
      target: RecordTarget.fromAlias(
        new ApiGatewayv2DomainProperties(domainName.regionalDomainName, domainName.regionalHostedZoneId),
      ),
    });
  }
  // One invoke permission for the API, not one per route: a config may hold many integrations, and the
  // function's resource policy has a size limit. Only the webhook routes use this integration.
  const ingestIntegration = new HttpLambdaIntegration('IngestIntegration', options.ingestFunction, {
    scopePermissionToRoute: false,
  });
  const webhookRoutes = new Map<string, HttpRoute>();
  const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
  for (const hook of options.hooks) {
    const [route] = api.addRoutes({
      path: `/v1/hooks/${hook.id}`,
      methods: [HttpMethod.ANY],
      integration: ingestIntegration,
    }) as [HttpRoute];
    webhookRoutes.set(hook.id, route);
    routeSettings[`ANY /v1/hooks/${hook.id}`] = {
      ThrottlingRateLimit: hook.throttle?.rateLimit ?? throttle.rateLimit,
      ThrottlingBurstLimit: hook.throttle?.burstLimit ?? throttle.burstLimit,
    };
    acknowledgeOpenRoute(route);
  }
  // HttpStage has no per-route settings; the routes are created in this template, so they exist first.
  const cfnStage = stage.node.defaultChild as CfnStage;
  if (options.hooks.length > 0) {
    cfnStage.routeSettings = routeSettings;
    for (const route of webhookRoutes.values()) stage.node.addDependency(route);
  }
  const jobsIntegration = new HttpLambdaIntegration('JobsIntegration', options.jobsApiFunction);
  const readRoute = (path: string): HttpRoute =>
    (
      api.addRoutes({
        path,
        methods: [HttpMethod.GET],
        integration: jobsIntegration,
        authorizer: new HttpIamAuthorizer(),
      }) as [HttpRoute]
    )[0];
  const jobsRoute = readRoute('/v1/jobs/{jobId}');
  const jobListRoute = readRoute('/v1/jobs');
  const deliveryRoute = readRoute('/v1/deliveries/{deliveryId}');
  const endpoint = options.domain === undefined ? api.apiEndpoint : `https://${options.domain.domainName}`;
  return {
    api,
    stage,
    accessLogGroup,
    webhookRoutes,
    jobsRoute,
    jobListRoute,
    deliveryRoute,
    endpoint,
    ...(domainName === undefined ? {} : { domainName }),
  };
}

/** Webhook routes take no IAM or token authorizer: the ingest authenticates each delivery itself. */
function acknowledgeOpenRoute(route: HttpRoute): void {
  acknowledge(
    route,
    'AwsSolutions-APIG4',
    'Webhook senders (GitHub, Stripe, …) cannot sign with IAM or obtain tokens, so the ingest function authenticates each delivery itself, before parsing it, by its integration’s verify.scheme: a signature over what the sender signs (the raw body for most schemes), an HMAC with the shared secret compared in constant time or a public-key signature (ed25519, SNS’s certificate) checked with the sender’s key; or, with scheme token, a shared secret in a header compared in constant time (the body is not signed); or nothing at all with scheme none, which the configuration accepts only with allowUnsigned: true, leaving that integration’s URL open to anyone. Only configured integrations have a route (API Gateway answers 404 to any other path), and each route has its own throttle.',
  );
}
