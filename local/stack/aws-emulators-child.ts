/**
 * The AWS emulators' own process (started by ./aws-emulators-process.ts with `child_process.fork`): starts
 * them with the options in argv[2], reports where they listen over IPC, and stops them when told, when the
 * parent goes away or on SIGTERM (./child-process.ts). The emulators (dynalite and LevelDB, s3rver, fauxqs)
 * are CPU work of their own; here they use a core the handlers do not.
 */
import { type AwsEmulatorOptions, startAwsEmulators } from './aws-emulators';
import type { AwsEmulatorsReady } from './aws-emulators-process';
import { serveParent } from './child-process';

const options = JSON.parse(process.argv[2] ?? '{}') as AwsEmulatorOptions;
serveParent({
  start: () => startAwsEmulators(options),
  ready: ({ stop: _stop, ...emulators }): AwsEmulatorsReady => ({ emulators }),
  stop: (emulators) => emulators.stop(),
});
