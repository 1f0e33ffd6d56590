/** Following jobs to the end (`send --wait`, `replay --fresh`): a progress line, then each job's outcome. */
import { findJob } from './jobs';
import { CliError, type CommandContext } from './types';

/**
 * Follows the jobs (through the stack the CLI targets: the local API, or the table on AWS) until each is
 * stored or failed, with a progress line on stderr; 0 when all are stored, 1 when one failed or time ran out.
 */
export async function waitForJobs(
  ctx: CommandContext,
  jobIds: readonly string[],
  options: { timeoutMs: number; pollMs: number; sleep?: (ms: number) => Promise<void> },
): Promise<number> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  const deadline = Date.now() + options.timeoutMs;
  const tty = (ctx.stderr as { isTTY?: boolean }).isTTY === true;
  let last = '';
  for (;;) {
    const views = await Promise.all(jobIds.map((jobId) => findJob(ctx, jobId)));
    const stored = views.filter((view) => view.status === 'stored');
    const failed = views.filter((view) => view.status === 'failed');
    const open = views.filter((view) => view.status !== 'stored' && view.status !== 'failed');
    const progress = `waiting: ${stored.length}/${views.length} stored, ${failed.length} failed${open.length === 0 ? '' : ` (${open.map((v) => `${v.jobId} ${v.status}`).join(', ')})`}`;
    if (progress !== last) {
      ctx.stderr.write(tty ? `\r\x1b[K${progress}` : `${progress}\n`);
      last = progress;
    }
    if (open.length === 0) {
      if (tty) ctx.stderr.write('\n');
      for (const view of views) {
        const detail =
          view.status === 'stored'
            ? view.files.map((file) => `s3://${file.bucket}/${file.key}`).join(', ')
            : `${view.error?.code ?? 'FAILED'}: ${(view.error?.message ?? '').replace(/\s+/g, ' ')}`;
        ctx.stderr.write(`job ${view.jobId} ${view.status}: ${detail}\n`);
      }
      return failed.length === 0 ? 0 : 1;
    }
    if (Date.now() >= deadline) {
      if (tty) ctx.stderr.write('\n');
      throw new CliError(
        `gave up waiting after ${Math.round(options.timeoutMs / 1000)} s: ${open.map((v) => `${v.jobId} is ${v.status}`).join(', ')} (docrelay jobs show <jobId> follows up)`,
      );
    }
    await sleep(options.pollMs);
  }
}
