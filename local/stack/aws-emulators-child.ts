/**
 * The AWS emulators' own process (forked by ./aws-emulators-process.ts): starts them with argv[2]'s options,
 * reports their endpoints over IPC, and stops when told, when the parent goes away or on SIGTERM. The
 * emulators are CPU work of their own; here they use a core the handlers do not.
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
