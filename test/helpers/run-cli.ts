/** Runs the CLI in this process as `npx docrelay …` would, and keeps what it printed. */
import { PassThrough } from 'node:stream';
import { main } from '../../bin/docrelay';

/** What one run of the CLI ended with and printed. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `docrelay <argv>` with the working directory and environment given (nothing of this process's). */
export async function runCli(
  argv: readonly string[],
  options: { readonly cwd: string; readonly env: Record<string, string> },
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const code = await main([...argv], { stdout, stderr, cwd: options.cwd, env: options.env });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
