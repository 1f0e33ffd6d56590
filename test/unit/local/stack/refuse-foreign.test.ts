/**
 * The local API's Host guard (docs/security.md, "The local stack and the browser"): its own loopback
 * address everywhere; the hosts of the integrations' `publicUrl`s (a local tunnel's) on the webhook URLs only.
 */
import { parseConfig } from '../../../../functions/config/load';
import { publicUrlHosts, refuseForeign } from '../../../../local/stack/api-server';

const own = { host: '127.0.0.1', port: 3000 };
const tunnel = ['abc.ngrok-free.app'];

const statusOf = (method: string, path: string, host: string, hosts: readonly string[] = tunnel) =>
  refuseForeign({ method, path, headers: { host } }, own, hosts)?.statusCode ?? 'allowed';

describe('refuseForeign', () => {
  it('answers its own loopback address on every route', () => {
    for (const path of ['/v1/hooks/sms', '/v1/jobs', '/_console/info', '/healthz', '/']) {
      expect(statusOf('GET', path, '127.0.0.1:3000')).toBe('allowed');
      expect(statusOf('GET', path, 'localhost:3000')).toBe('allowed');
    }
  });

  it("lets a publicUrl's host reach the webhook URLs, and nothing else", () => {
    expect(statusOf('POST', '/v1/hooks/sms', 'abc.ngrok-free.app')).toBe('allowed');
    expect(statusOf('POST', '/v1/hooks/sms', 'ABC.ngrok-free.app')).toBe('allowed');
    for (const path of [
      '/v1/jobs',
      '/v1/jobs/j-1',
      '/v1/deliveries/d',
      '/_console/info',
      '/_local/events/x',
      '/healthz',
      '/',
      '/v1/hooks/a/b',
    ]) {
      expect(statusOf('GET', path, 'abc.ngrok-free.app')).toBe(421);
    }
  });

  it('refuses any other host, on the webhook URLs too (DNS rebinding)', () => {
    expect(statusOf('POST', '/v1/hooks/sms', 'attacker.example')).toBe(421);
    expect(statusOf('POST', '/v1/hooks/sms', 'abc.ngrok-free.app', [])).toBe(421);
    expect(statusOf('POST', '/v1/hooks/sms', 'abc.ngrok-free.app:8443')).toBe(421);
  });
});

describe('publicUrlHosts', () => {
  it("names each integration's publicUrl host as a Host header carries it (a port only when not the default)", () => {
    const config = parseConfig(`service:
  baseUrl: http://127.0.0.1:9
integrations:
  - id: a
    verify: { scheme: twilio, secret: s/a }
    publicUrl: https://ABC.ngrok-free.app/v1/hooks/a
    documents: [ { name: n, template: { id: "1" }, data: {} } ]
  - id: b
    verify: { scheme: square, secret: s/b }
    publicUrl: http://tunnel.example:8080/hooks/b?x=1
    documents: [ { name: n, template: { id: "1" }, data: {} } ]
  - id: c
    verify: { scheme: github, secret: s/c }
    documents: [ { name: n, template: { id: "1" }, data: {} } ]
`);
    expect(publicUrlHosts(config)).toEqual(['abc.ngrok-free.app', 'tunnel.example:8080']);
  });
});
