/**
 * The `docrelay` CLI: dispatches to one module per command, loaded only when used, so that a quick command
 * does not pay for the local stack's imports.
 */
import { CliError, type CommandContext, type CommandRun } from './commands/types';

interface CommandEntry {
  readonly usage: string;
  // Loaded with require() so that tsx and Jest resolve the TypeScript module the same way.
  readonly load: () => { run: CommandRun };
}

const commands: Record<string, CommandEntry> = {
  dev: {
    usage: 'dev                                   run the local stack (as npm start)',
    load: () => require('./commands/dev') as { run: CommandRun },
  },
  emulator: {
    usage: 'emulator [--port N] [--link-ttl S]    run the Document Generation Service emulator',
    load: () => require('./commands/emulator') as { run: CommandRun },
  },
  workspace: {
    usage: 'workspace [--json]                   show the service workspace',
    load: () => require('./commands/workspace') as { run: CommandRun },
  },
  templates: {
    usage: 'templates list|show <id> [--json]    list templates, or show one with its properties',
    load: () => require('./commands/templates') as { run: CommandRun },
  },
  check: {
    usage: 'check [--offline]                    validate the config and every mapping against the templates',
    load: () => require('./commands/check') as { run: CommandRun },
  },
  map: {
    usage: 'map <integrationId> --payload <file> [--header name:value]...',
    load: () => require('./commands/map') as { run: CommandRun },
  },
  send: {
    usage:
      'send <integrationId> --payload <file> [--url <base>] [--header name:value]... [--delivery-id <id>]',
    load: () => require('./commands/send') as { run: CommandRun },
  },
  'put-event': {
    usage: 'put-event <integrationId> --event <file>',
    load: () => require('./commands/put-event') as { run: CommandRun },
  },
  jobs: {
    usage: 'jobs show <jobId> [--json]',
    load: () => require('./commands/jobs') as { run: CommandRun },
  },
  replay: {
    usage: 'replay <jobId> [--fresh]',
    load: () => require('./commands/replay') as { run: CommandRun },
  },
  console: {
    usage: 'console --stack <name> [--port N]      the web console of a deployed stack, on loopback',
    load: () => require('./commands/console') as { run: CommandRun },
  },
  dlq: {
    usage: 'dlq list [--json] [--max N] | dlq redrive [--max N]',
    load: () => require('./commands/dlq') as { run: CommandRun },
  },
};

const usage = (): string =>
  ['usage: docrelay <command> [options]', '', ...Object.values(commands).map((c) => `  ${c.usage}`)].join(
    '\n',
  );

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function main(argv: string[], ctx: Omit<CommandContext, 'argv'>): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (entry === undefined) {
    ctx.stderr.write(`docrelay: unknown command "${name}" (run docrelay --help)\n`);
    return 2;
  }
  try {
    const { run } = entry.load();
    return await run({ ...ctx, argv: rest });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // One line: the first line of the message, never a stack trace.
    ctx.stderr.write(`docrelay ${name}: ${message.split('\n')[0]}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error) => {
      process.stderr.write(`docrelay: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    });
}
