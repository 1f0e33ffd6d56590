/** The ingest's bounded fetches keep at most a limit of an answer and stop reading there. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchBounded, readAtMost } from '../../../functions/wiring/ingest';

const CHUNK = Buffer.alloc(16 * 1024, 0x61);
/** Chunks the endless route writes at most (bounded: 64 MB), so a reader that never stops still ends. */
const MAX_CHUNKS = 4096;

let server: Server;
let url: string;
let written = 0;
let closed: Promise<void>;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/small') {
      response.end('short answer');
      return;
    }
    // An answer far larger than anything kept, written while the client reads it.
    written = 0;
    closed = new Promise((resolve) => response.on('close', () => resolve()));
    const pump = (): void => {
      while (written < MAX_CHUNKS) {
        written += 1;
        if (!response.write(CHUNK)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('readAtMost', () => {
  it('returns a short answer whole', async () => {
    const body = await readAtMost(await fetch(`${url}/small`), 65_536);
    expect(body.toString()).toBe('short answer');
  });

  it('keeps the first bytes of a large answer and cancels the rest unread', async () => {
    const body = await readAtMost(await fetch(`${url}/large`), 65_536);
    expect(body.length).toBe(65_536);
    // The client went away: the server saw its connection close long before its 64 MB were written.
    await closed;
    expect(written).toBeLessThan(MAX_CHUNKS);
  });

  it('is what fetchBounded answers with', async () => {
    const answer = await fetchBounded(`${url}/large`);
    expect({ status: answer.status, length: answer.body.length }).toEqual({ status: 200, length: 65_536 });
    await closed;
    expect(written).toBeLessThan(MAX_CHUNKS);
  });
});
