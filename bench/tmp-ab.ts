import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createObservability } from '../functions/commons/observability';
import { parseConfig } from '../functions/config/load';
import { makeIngestHandler } from '../functions/handlers/ingest/make-handler';
import { buildIngestDeps } from '../functions/wiring/ingest';
import { localContext } from '../local/stack/lambda-context';
import { githubPayloads } from './fixtures/payloads';
import { instantAwsClients } from './instant-aws';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const SECRETS: Record<string, string> = {
  'bench/github-webhook': 'bench-github-webhook-secret-0123456789',
  'bench/service-api-key': 'k',
  'docrelay/sealing-key': 'bench-sealing-secret-0123456789abcdef',
};
const config = parseConfig(readFileSync(join('/work/main/bench', 'fixtures', 'ingest-config.yaml'), 'utf8'));
function make(variant: string) {
  const aws = instantAwsClients();
  if (variant === 'nolog')
    for (const c of [aws.dynamodb, aws.sqs] as any[]) c.middlewareStack.remove('loggerMiddleware');
  return makeIngestHandler(
    buildIngestDeps({
      config,
      secrets: { get: async (n: string) => SECRETS[n] as string, refresh: () => undefined },
      dynamodb: aws.dynamodb,
      sqs: aws.sqs,
      tableName: 'bench-table',
      queueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench',
      sealingSecretName: 'docrelay/sealing-key',
    }),
    createObservability('ingest', { logLevel: 'SILENT' }),
  );
}
const body = githubPayloads()['20 KB'];
const sig = `sha256=${createHmac('sha256', SECRETS['bench/github-webhook'] as string)
  .update(body)
  .digest('hex')}`;
let n = 0;
const event = (): any => ({
  version: '2.0',
  routeKey: 'POST /v1/hooks/{integrationId}',
  rawPath: '/v1/hooks/github-prs',
  rawQueryString: '',
  headers: {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/bench',
    'x-github-event': 'pull_request',
    'x-github-delivery': `bench-${++n}`,
    'x-hub-signature-256': sig,
  },
  requestContext: {
    accountId: '0',
    apiId: 'b',
    domainName: 'bench.execute-api.us-east-1.amazonaws.com',
    domainPrefix: 'bench',
    http: {
      method: 'POST',
      path: '/v1/hooks/github-prs',
      protocol: 'HTTP/1.1',
      sourceIp: '127.0.0.1',
      userAgent: 'x',
    },
    requestId: 'b',
    routeKey: 'POST /v1/hooks/{integrationId}',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
  pathParameters: { integrationId: 'github-prs' },
  body: body.toString('utf8'),
  isBase64Encoded: false,
});
const ctx = localContext('ingest', 10_000);
const floor = () => {
  createHmac('sha256', SECRETS['bench/github-webhook'] as string)
    .update(body)
    .digest('hex');
  JSON.parse(body.toString('utf8'));
};
(async () => {
  const variants = (process.env.VARIANTS ?? 'base,nolog').split(',');
  const handlers = Object.fromEntries(variants.map((v) => [v, make(v)]));
  const res: Record<string, number[]> = { floor: [] };
  for (const v of variants) {
    res[v] = [];
    for (let i = 0; i < 300; i++) await handlers[v]!(event(), ctx);
  }
  for (let r = 0; r < Number(process.env.ROUNDS ?? 9); r++) {
    let c = process.cpuUsage();
    for (let i = 0; i < 3000; i++) floor();
    let d = process.cpuUsage(c);
    res.floor!.push((d.user + d.system) / 3000);
    for (const v of variants) {
      c = process.cpuUsage();
      for (let i = 0; i < 400; i++) await handlers[v]!(event(), ctx);
      d = process.cpuUsage(c);
      res[v]!.push((d.user + d.system) / 400);
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  for (const [k, a] of Object.entries(res))
    console.log(
      k,
      med(a).toFixed(1),
      'µs cpu',
      k === 'floor' ? '' : (med(a) / med(res.floor!)).toFixed(1) + 'x',
    );
})();
