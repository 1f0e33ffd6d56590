/**
 * The local AWS emulators in a child process of their own, so that with more than one core they do not
 * share the handlers' event loop. Same data directory and persistence as in process; the child reports its
 * endpoints over IPC and stops when asked or when this process goes away (./aws-emulators-child.ts).
 */
import { join } from 'node:path';
import type { AwsEmulatorOptions, AwsEmulators } from './aws-emulators';
import { forkChild } from './child-process';

/** What the child reports when its emulators are up: everything but `stop`. */
export type AwsEmulatorsReady = { readonly emulators: Omit<AwsEmulators, 'stop'> };

/** Options of the emulators' process. */
export interface AwsEmulatorsProcessOptions extends AwsEmulatorOptions {
  /** Longest wait for the emulators to start. @default 60_000 */
  readonly startTimeoutMs?: number;
  /** Hears that the child exited while it was meant to run (the stack cannot work without it). */
  readonly onExit?: (reason: string) => void;
}

/** The emulators running in their child process. */
export interface AwsEmulatorsProcess extends AwsEmulators {
  /** The child's process id. */
  readonly pid: number;
}

/** Starts the AWS emulators in a child process; resolves once their resources exist. */
export async function startAwsEmulatorsProcess(
  options: AwsEmulatorsProcessOptions,
): Promise<AwsEmulatorsProcess> {
  const { startTimeoutMs = 60_000, onExit, ...emulatorOptions } = options;
  const running = await forkChild<AwsEmulatorsReady>({
    module: join(__dirname, 'aws-emulators-child.ts'),
    argument: JSON.stringify(emulatorOptions),
    what: 'the AWS emulators',
    process: "the AWS emulators' process",
    startTimeoutMs,
    output: 'ignore',
    ...(onExit === undefined ? {} : { onExit }),
  });
  return { ...running.ready.emulators, pid: running.child.pid ?? 0, stop: running.stop };
}
