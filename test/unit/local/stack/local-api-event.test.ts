/**
 * The local API's translation of a request into the API Gateway event the handlers get: attacker-chosen
 * query and header names must come through as plain data, whatever they are called, and the URL a sender
 * signed must be the one the client addressed. (On AWS, API Gateway builds the event itself; locally this
 * code does, and `$query`/`$headers` reach the mappings.)
 */
import { readApiRequest } from '../../../../functions/http/api-event';
import { toApiGatewayEvent } from '../../../../local/stack/api-gateway-event';

const route = { routeKey: 'POST /v1/hooks/{integrationId}', pathParameters: { integrationId: 'hook' } };

describe('toApiGatewayEvent with names of Object.prototype members', () => {
  it('keeps query parameters named constructor, toString and hasOwnProperty as sent', () => {
    const event = toApiGatewayEvent(
      {
        method: 'POST',
        url: '/v1/hooks/hook?constructor=c&toString=t&hasOwnProperty=h&a=1&a=2',
        headers: {},
      },
      Buffer.from('{}'),
      route,
    );
    expect(event.queryStringParameters).toEqual({
      constructor: 'c',
      toString: 't',
      hasOwnProperty: 'h',
      a: '1,2',
    });
  });

  it('leaves Object.prototype alone whatever the query and header names', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const headers = Object.fromEntries([
      ['__proto__', 'x'],
      ['constructor', 'y'],
      ['content-type', 'application/json'],
    ]);
    toApiGatewayEvent(
      { method: 'POST', url: '/v1/hooks/hook?__proto__[polluted]=1&__proto__=2', headers },
      Buffer.from('{}'),
      route,
    );
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('toApiGatewayEvent and the URL a sender signed', () => {
  const hook = { routeKey: 'POST /v1/hooks/{integrationId}', pathParameters: { integrationId: 'sms' } };

  it('gives the handler the scheme the local server served (http), so URL-signing senders verify', () => {
    const event = toApiGatewayEvent(
      { method: 'POST', url: '/v1/hooks/sms?a=1', headers: { host: '127.0.0.1:3000' } },
      Buffer.from('From=x'),
      hook,
    );
    expect(readApiRequest(event).url).toBe('http://127.0.0.1:3000/v1/hooks/sms?a=1');
  });

  it('keeps the scheme a tunnel forwarded (X-Forwarded-Proto)', () => {
    const event = toApiGatewayEvent(
      {
        method: 'POST',
        url: '/v1/hooks/sms',
        headers: { host: 'abc.ngrok-free.app', 'x-forwarded-proto': 'https' },
      },
      Buffer.from('From=x'),
      hook,
    );
    expect(readApiRequest(event).url).toBe('https://abc.ngrok-free.app/v1/hooks/sms');
  });
});
