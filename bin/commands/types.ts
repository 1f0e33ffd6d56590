import type { Writable } from 'node:stream';

/** What every CLI command receives: its own arguments and where to write. */
export interface CommandContext {
  /** Arguments after the command name (for `templates show 9002`: `['show', '9002']`). */
  readonly argv: string[];
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
}

/** A CLI command: resolves to the process exit code. Throw `CliError` (or any error) for a one-line failure. */
export type CommandRun = (ctx: CommandContext) => Promise<number>;

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
