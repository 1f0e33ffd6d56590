/**
 * The workers' own process (forked by ./workers-process.ts): reads the config file the parent validated,
 * creates AWS clients for the endpoints in argv[2], starts the worker side (./workers.ts), reports the
 * service's URL, then runs the poller, takes new configurations and stops as told (./child-process.ts).
 */
import { createAwsClients } from '../../functions/adapters/aws-clients';
import { compileConfig } from '../../functions/config/compile';
import { loadConfigFile } from '../../functions/config/load';
import { LOCAL_CREDENTIALS } from './aws-emulators';
import { serveParent, tellParent } from './child-process';
import { startWorkerSide } from './workers';
import type { WorkersChildArgument, WorkersNotice, WorkersReady, WorkersRequest } from './workers-process';

const settings = JSON.parse(process.argv[2] ?? '{}') as WorkersChildArgument;
const tell = (notice: WorkersNotice): void => tellParent(notice);

serveParent({
  start: async () => {
    // The parent's configuration when it gave one (a restart: the file may hold an edit it refused since).
    const initial = settings.initialConfig;
    const config =
      initial === undefined
        ? await loadConfigFile(settings.settings.configPath)
        : compileConfig(initial.config, initial.source, undefined, { lazy: true });
    const clients = createAwsClients({
      region: settings.aws.region,
      credentials: LOCAL_CREDENTIALS,
      endpoints: settings.aws.endpoints,
    });
    const destroyClients = (): void => {
      for (const client of Object.values(clients)) client.destroy();
    };
    try {
      const side = await startWorkerSide({
        ...settings,
        config,
        clients,
        onLine: (text) => tell({ type: 'line', text }),
      });
      return { side, destroyClients };
    } catch (error) {
      destroyClients();
      throw error;
    }
  },
  ready: ({ side }): WorkersReady => ({ docgenUrl: side.docgenUrl }),
  stop: async ({ side, destroyClients }) => {
    await side.stop();
    destroyClients();
  },
  onMessage: ({ side }, message) => {
    const request = message as WorkersRequest;
    const answer = (id: number, work: Promise<void>): void => {
      work.then(
        () => tell({ type: 'done', id }),
        (error: unknown) =>
          tell({ type: 'done', id, error: error instanceof Error ? error.message : String(error) }),
      );
    };
    if (request.type === 'start-workers') side.startWorkers();
    else if (request.type === 'stop-workers') answer(request.id, side.stopWorkers(request.options));
    else if (request.type === 'use-config') {
      // The config the parent validated: compiled here as a Lambda compiles its bundled one (expressions on
      // first use), so an edit between the parent's read and a read here cannot split the two processes.
      const { config, source } = request.config;
      answer(
        request.id,
        (async () => side.useConfig(compileConfig(config, source, undefined, { lazy: true })))(),
      );
    }
  },
});
