/**
 * Benchmark 2, ingest over HTTP: the local stack's webhook endpoint (signed GitHub release deliveries, each
 * with a new delivery id, so every one is verified, recorded in DynamoDB (dynalite) and queued in SQS
 * (fauxqs)) under a bounded autocannon load on loopback, against a bare node:http server that reads the body
 * and answers 202. The load generator runs in its own process; workers are off, so only the ingest runs.
 */

import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readLocalSettings } from '../functions/commons/env';
import { startLocalStack } from '../local/stack/local-stack';
import { lastJsonLine, runTsChild } from './child';
import { compare, fmt, summarize } from './harness';
import type { LoadRequest, LoadResult } from './load-client';
import type { ResultRow } from './results';

const ROOT = resolve(__dirname, '..');

/** Options of the HTTP benchmark. */
export interface IngestHttpOptions {
  readonly rounds: number;
  readonly durationSeconds: number;
  readonly connections: number;
}

function bareServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = '{"accepted":true}';
      res.writeHead(202, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.end(body);
    });
  });
  return new Promise((resolveStart) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolveStart({
        url: `http://127.0.0.1:${port}/v1/hooks/github-releases`,
        close: () =>
          new Promise((resolveClose) => {
            server.closeAllConnections();
            server.close(() => resolveClose());
          }),
      });
    });
  });
}

/** Runs benchmark 2: req/s and p50/p99 ack latency, docrelay vs the bare server. */
export async function runIngestHttp(options: IngestHttpOptions): Promise<ResultRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-bench-http-'));
  const settings = readLocalSettings({ DOCRELAY_DATA_DIR: dataDir, PORT: '0' }, ROOT);
  const stack = await startLocalStack({ settings, logLevel: 'SILENT', startWorkers: false });
  const bare = await bareServer();
  try {
    const secrets = JSON.parse(await readFile(settings.secretsFile, 'utf8')) as Record<string, string>;
    const bodyFile = join(ROOT, 'config', 'samples', 'github-release-published.json');
    const body = await readFile(bodyFile);
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'release',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secrets['docrelay/github-webhook'] ?? '')
        .update(body)
        .digest('hex')}`,
    };
    const load = async (url: string): Promise<LoadResult> => {
      const request: LoadRequest = {
        url,
        bodyFile,
        headers,
        connections: options.connections,
        durationSeconds: options.durationSeconds,
      };
      const out = await runTsChild('bench/load-client.ts', [JSON.stringify(request)], {
        timeoutMs: (options.durationSeconds + 60) * 1000,
      });
      const result = lastJsonLine(out) as LoadResult;
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`load on ${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      return result;
    };
    const docrelay: LoadResult[] = [];
    const baseline: LoadResult[] = [];
    const comparison = await compare({
      rounds: options.rounds,
      subject: async () => {
        const result = await load(`${stack.url}/v1/hooks/github-releases`);
        docrelay.push(result);
        return result.requestsPerSecond;
      },
      baseline: async () => {
        const result = await load(bare.url);
        baseline.push(result);
        return result.requestsPerSecond;
      },
    });
    // The first round of each was warm-up; keep the measured ones.
    const measured = (all: LoadResult[]): LoadResult[] => all.slice(all.length - options.rounds);
    const p = (all: LoadResult[], key: 'p50Ms' | 'p99Ms') => summarize(measured(all).map((r) => r[key]));
    const rows: ResultRow[] = [
      {
        benchmark: 'http',
        case: `${options.connections} connections × ${options.durationSeconds} s, 8.6 KB GitHub release`,
        metric: 'requests/s (docrelay / bare node:http)',
        subject: `${fmt(comparison.subject.median)} req/s (${fmt(comparison.subject.p25)}–${fmt(comparison.subject.p75)})`,
        baseline: `${fmt(comparison.baseline.median)} req/s (${fmt(comparison.baseline.p25)}–${fmt(comparison.baseline.p75)})`,
        ratio: comparison.ratio,
        data: { comparison, docrelay: measured(docrelay), baseline: measured(baseline) },
      },
    ];
    for (const key of ['p50Ms', 'p99Ms'] as const) {
      const s = p(docrelay, key);
      const b = p(baseline, key);
      // autocannon reports whole milliseconds: a bare server's 0 ms means "under 1 ms", not a ratio.
      const resolved = b.median >= 1;
      rows.push({
        benchmark: 'http',
        case: `${options.connections} connections, ack latency ${key === 'p50Ms' ? 'p50' : 'p99'}`,
        metric: 'ms (docrelay / bare node:http)',
        subject: `${fmt(s.median)} ms (${fmt(s.p25)}–${fmt(s.p75)})`,
        baseline: resolved ? `${fmt(b.median)} ms (${fmt(b.p25)}–${fmt(b.p75)})` : '< 1 ms',
        ...(resolved ? { ratio: s.median / b.median } : {}),
      });
    }
    return rows;
  } finally {
    await bare.close();
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
