/**
 * The local `/healthz`: 200 while every part runs, 503 while the workers' process is being started again; read
 * with GET or HEAD only.
 */
import type { AddressInfo } from 'node:net';
import { type LocalHealth, startApiServer } from '../../../../local/stack/api-server';

async function getHealth(health?: () => LocalHealth): Promise<{ status: number; body: unknown }> {
  const api = await startApiServer(health === undefined ? {} : { health }, { port: 0 });
  try {
    const { port } = api.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toBe('no-store');
    return { status: response.status, body: await response.json() };
  } finally {
    await api.close();
  }
}

describe('GET /healthz', () => {
  it('answers 200 ok while the workers run', async () => {
    expect(await getHealth(() => ({ workers: 'running' }))).toEqual({
      status: 200,
      body: { status: 'ok', workers: 'running' },
    });
  });

  it('answers 503 degraded, saying why, while the workers’ process is being started again', async () => {
    const { status, body } = await getHealth(() => ({ workers: 'restarting' }));
    expect(status).toBe(503);
    expect(body).toEqual({
      status: 'degraded',
      workers: 'restarting',
      detail: expect.stringContaining('webhooks are accepted and queued'),
    });
  });

  it('answers 200 ok, and nothing of workers, on a server with none behind it (the console alone)', async () => {
    expect(await getHealth()).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers another method with 405 problem+json and Allow: GET, HEAD', async () => {
    const api = await startApiServer({ health: () => ({ workers: 'running' }) }, { port: 0 });
    try {
      const { port } = api.server.address() as AddressInfo;
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`, { method, body: '{}' });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(response.headers.get('content-type')).toBe('application/problem+json');
        expect(await response.json()).toMatchObject({ type: 'urn:docrelay:problem:method-not-allowed' });
      }
      expect((await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'HEAD' })).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
