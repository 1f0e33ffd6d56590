/**
 * The HTTP benchmark's load generator, run as its own process so that it never shares an event loop with the
 * server it measures. Reads its options as JSON from argv, POSTs the body with autocannon (bounded by
 * duration and connections; a fresh X-GitHub-Delivery per request so none is a duplicate) and prints the
 * result as one JSON line.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** What the parent asks for. */
export interface LoadRequest {
  readonly url: string;
  readonly bodyFile: string;
  readonly headers: Record<string, string>;
  readonly connections: number;
  readonly durationSeconds: number;
}

/** What the child answers. */
export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly total: number;
  readonly non2xx: number;
  readonly errors: number;
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '{}') as LoadRequest;
  const body = readFileSync(request.bodyFile);
  let counter = 0;
  const result = await autocannon({
    url: request.url,
    connections: request.connections,
    duration: request.durationSeconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        body,
        headers: request.headers,
        setupRequest: (data) => {
          counter += 1;
          return {
            ...data,
            headers: { ...request.headers, 'x-github-delivery': `bench-${process.pid}-${counter}` },
          };
        },
      },
    ],
  });
  const answer: LoadResult = {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result['2xx'] + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
