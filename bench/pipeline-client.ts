/**
 * The pipeline benchmark's webhook sender, run as its own process so that it never shares an event loop with
 * the stack it measures (as the n8n side-by-side's driver did). A closed loop: `concurrency` requests in
 * flight, each lane sending its next webhook when the previous one is answered, until `webhooks` are sent or
 * `timeoutMs` has passed. Every webhook is a Stripe `invoice.paid` event of its own (a new event id, so no
 * delivery is a duplicate), signed at send time with the integration's scheme. Reads its options as JSON from
 * argv and prints one JSON line: per webhook its send time (epoch ms), ack latency, status and job ids.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { senderScheme } from '../functions/senders/registry';

/** What the parent asks for. */
export interface PipelineClientRequest {
  /** The webhook URL (loopback). */
  readonly url: string;
  /** A Stripe event to vary (config/samples/stripe-invoice-paid.json). */
  readonly sampleFile: string;
  /** The integration's signing secret (a development secret of the stack under test). */
  readonly secret: string;
  readonly webhooks: number;
  readonly concurrency: number;
  /** No new webhook is sent after this long. */
  readonly timeoutMs: number;
  /** Makes the event ids of this run unique. */
  readonly tag: string;
}

/** One webhook as the sender saw it. */
export interface SentWebhook {
  /** Epoch milliseconds (fractional) when the request was started. */
  readonly sentAt: number;
  /** Request start → response end, milliseconds. */
  readonly ackMs: number;
  readonly status: number;
  readonly jobIds: readonly string[];
}

/** What the child answers. */
export interface PipelineClientResult {
  readonly sent: readonly SentWebhook[];
  readonly timedOut: boolean;
}

const epochMs = (): number => performance.timeOrigin + performance.now();

function post(
  agent: Agent,
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('webhook request timed out after 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

const jobIdsOf = (text: string): string[] => {
  try {
    const parsed: unknown = JSON.parse(text);
    const jobs = typeof parsed === 'object' && parsed !== null && 'jobs' in parsed ? parsed.jobs : undefined;
    return Array.isArray(jobs)
      ? jobs.flatMap((job: unknown) =>
          typeof job === 'object' && job !== null && 'jobId' in job && typeof job.jobId === 'string'
            ? [job.jobId]
            : [],
        )
      : [];
  } catch {
    return [];
  }
};

/** Sends the webhooks; resolves when every lane is done. */
export async function sendWebhooks(options: PipelineClientRequest): Promise<PipelineClientResult> {
  const scheme = senderScheme('stripe');
  if (scheme === undefined) throw new Error('no stripe sender scheme');
  const sample = JSON.parse(readFileSync(options.sampleFile, 'utf8')) as {
    data: { object: Record<string, unknown> };
  };
  const url = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const deadline = Date.now() + options.timeoutMs;
  const sent: SentWebhook[] = [];
  let next = 0;
  let timedOut = false;
  const lane = async (): Promise<void> => {
    while (next < options.webhooks) {
      if (Date.now() > deadline) {
        timedOut = true;
        return;
      }
      const i = next;
      next += 1;
      const body = Buffer.from(
        JSON.stringify({
          ...sample,
          id: `evt_bench_${options.tag}_${i}`,
          data: { object: { ...sample.data.object, number: `BENCH-${options.tag}-${i}` } },
        }),
      );
      const sentAt = epochMs();
      const signature = scheme.sign({
        config: { scheme: 'stripe', secret: 'bench' },
        secrets: [options.secret],
        rawBody: body,
        now: new Date(),
      });
      const answer = await post(agent, url, body, { 'content-type': 'application/json', ...signature });
      sent.push({ sentAt, ackMs: epochMs() - sentAt, status: answer.status, jobIds: jobIdsOf(answer.text) });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, lane));
  } finally {
    agent.destroy();
  }
  return { sent: sent.sort((a, b) => a.sentAt - b.sentAt), timedOut };
}

if (require.main === module) {
  sendWebhooks(JSON.parse(process.argv[2] ?? '{}') as PipelineClientRequest)
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    });
}
