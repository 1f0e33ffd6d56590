import type { Writable } from 'node:stream';

/** What every CLI command receives: where to write, the environment and the working directory. */
export interface CommandContext {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
}

/** A failure the CLI reports as one line and a non-zero exit (2 for usage errors, 1 otherwise). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
