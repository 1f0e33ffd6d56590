/**
 * The AWS emulators' own process (started by ./aws-emulators-process.ts with `child_process.fork`): starts
 * them with the options in argv[2], reports where they listen over IPC, and stops them when told, when the
 * parent goes away (the IPC channel closes: the parent exited or was killed) or on SIGTERM. The emulators
 * (dynalite and LevelDB, s3rver, fauxqs) are CPU work of their own; here they use a core the handlers do not.
 */
import { type AwsEmulatorOptions, type AwsEmulators, startAwsEmulators } from './aws-emulators';
import type { ChildMessage, ParentMessage } from './aws-emulators-process';

/** Longest a stop may take before the process exits anyway. */
const STOP_BOUND_MS = 10_000;

const tell = (message: ChildMessage): void => {
  if (process.connected) process.send?.(message);
};

function main(): void {
  const options = JSON.parse(process.argv[2] ?? '{}') as AwsEmulatorOptions;
  const starting: Promise<AwsEmulators> = startAwsEmulators(options);
  let stopping: Promise<void> | undefined;
  const stop = (code: number): Promise<void> => {
    stopping ??= (async () => {
      // Bounded: an emulator that hangs in close must not keep the process (and the data dir's lock) alive.
      setTimeout(() => process.exit(code), STOP_BOUND_MS).unref();
      await starting.then(
        (emulators) => emulators.stop(),
        () => undefined,
      );
      tell({ type: 'stopped' });
      process.exit(code);
    })();
    return stopping;
  };
  // Ctrl-C reaches the whole process group: the parent decides when the emulators stop (after its workers).
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => void stop(0));
  process.on('disconnect', () => void stop(0));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') void stop(0);
  });
  starting.then(
    ({ stop: _stop, ...emulators }) => {
      if (stopping === undefined) tell({ type: 'ready', emulators });
    },
    (error: unknown) => {
      tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
      void stop(1);
    },
  );
}

main();
