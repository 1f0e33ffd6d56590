/** The integration id of a webhook request: the local API's path parameter, or AWS's per-integration route. */
import { hookIntegrationId } from '../../../functions/http/hook-route';

describe('hookIntegrationId', () => {
  test('the path parameter of the local API’s /v1/hooks/{integrationId} route', () => {
    expect(
      hookIntegrationId({
        routeKey: 'ANY /v1/hooks/{integrationId}',
        pathParameters: { integrationId: 'github' },
      }),
    ).toBe('github');
  });

  test('the last segment of an AWS route of one integration', () => {
    expect(hookIntegrationId({ routeKey: 'ANY /v1/hooks/stripe_invoices' })).toBe('stripe_invoices');
    expect(hookIntegrationId({ routeKey: 'POST /v1/hooks/github-releases', pathParameters: {} })).toBe(
      'github-releases',
    );
  });

  test('no id from any other route, or from a route template without its parameter', () => {
    for (const routeKey of [
      'GET /v1/jobs/{jobId}',
      '$default',
      'ANY /v1/hooks/{integrationId}',
      'ANY /v1/hooks/a/b',
    ]) {
      expect(hookIntegrationId({ routeKey })).toBe('');
    }
  });
});
