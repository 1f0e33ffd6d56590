/**
 * Floods: each integration that takes webhooks has a route of its own with its own throttle, so a path of no
 * integration is answered by API Gateway (404) without invoking the ingest, and one noisy sender cannot use up
 * another's limit.
 */
import { fixtureConfig, logicalId, synthStack } from './support';

type StageProperties = {
  DefaultRouteSettings: { ThrottlingRateLimit: number; ThrottlingBurstLimit: number };
  RouteSettings?: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
};

function synth(props: Parameters<typeof synthStack>[0] = {}, config = fixtureConfig()) {
  const { stack, template } = synthStack(props, config);
  const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
    (route) => route.Properties.RouteKey as string,
  );
  const stages = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
  expect(stages).toHaveLength(1);
  return {
    stack,
    template,
    routes,
    stage: stages[0]!.Properties as StageProperties,
    stageResource: stages[0]!,
  };
}

describe('one route per webhook integration', () => {
  const { stack, routes, stage, stageResource, template } = synth();

  test('every integration with verify has its route; none with a path parameter or a catch-all reaches the ingest', () => {
    expect(routes.filter((key) => key.includes('/v1/hooks/')).sort()).toEqual(
      ['ANY /v1/hooks/github-releases', 'ANY /v1/hooks/order-events', 'ANY /v1/hooks/stripe_invoices'].sort(),
    );
    expect(
      routes.filter(
        (key) => key.includes('{integrationId}') || key.includes('{proxy+}') || key === '$default',
      ),
    ).toEqual([]);
  });

  test('each webhook route has its own throttle (the stack’s by default), which the stage creates after the routes', () => {
    expect(stage.RouteSettings).toEqual({
      'ANY /v1/hooks/github-releases': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      'ANY /v1/hooks/order-events': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      'ANY /v1/hooks/stripe_invoices': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
    const routeIds = Object.keys(template.findResources('AWS::ApiGatewayV2::Route'));
    const dependsOn = (stageResource.DependsOn ?? []) as string[];
    const webhookRouteIds = routeIds.filter((routeId) =>
      String(template.toJSON().Resources[routeId].Properties.RouteKey).includes('/v1/hooks/'),
    );
    expect(webhookRouteIds).toHaveLength(3);
    for (const routeId of webhookRouteIds) expect(dependsOn).toContain(routeId);
  });

  test('the ingest may be invoked by this API through one permission, not one per route', () => {
    const ingest = logicalId(stack, stack.docRelay.ingestFunction);
    const ofIngest = Object.values(template.findResources('AWS::Lambda::Permission')).filter((permission) =>
      JSON.stringify(permission.Properties.FunctionName).includes(ingest),
    );
    expect(ofIngest).toHaveLength(1);
  });
});

describe('throttles from the config', () => {
  test('an integration’s own throttle applies to its route alone; the others keep the stack’s', () => {
    const config = fixtureConfig();
    const withThrottle = {
      ...config,
      integrations: config.integrations.map((integration) =>
        integration.id === 'stripe_invoices'
          ? { ...integration, throttle: { rateLimit: 5, burstLimit: 10 } }
          : integration,
      ),
    } as typeof config;
    const { stage } = synth({ throttle: { rateLimit: 20, burstLimit: 40 } }, withThrottle);
    expect(stage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
    expect(stage.RouteSettings?.['ANY /v1/hooks/stripe_invoices']).toEqual({
      ThrottlingRateLimit: 5,
      ThrottlingBurstLimit: 10,
    });
    expect(stage.RouteSettings?.['ANY /v1/hooks/github-releases']).toEqual({
      ThrottlingRateLimit: 20,
      ThrottlingBurstLimit: 40,
    });
  });

  test('an events-only integration has no route', () => {
    const config = fixtureConfig();
    const eventsOnly = {
      ...config,
      integrations: config.integrations.map((integration) => {
        if (integration.id !== 'order-events') return integration;
        const { verify: _verify, ...rest } = integration;
        return rest;
      }),
    } as typeof config;
    const { routes, stack } = synth({}, eventsOnly);
    expect(routes).not.toContain('ANY /v1/hooks/order-events');
    expect([...stack.docRelay.webhookRoutes.keys()].sort()).toEqual(['github-releases', 'stripe_invoices']);
  });
});
