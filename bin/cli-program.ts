/**
 * The `docrelay` command line, each command and option declared once with commander, so help, `--version`,
 * usage errors and the README's CLI table agree. A command's module is loaded only when that command runs,
 * so a quick command does not pay for the local stack's imports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type HelpContext, InvalidArgumentError, Option } from 'commander';
import type { CommandContext } from './commands/types';

/** The package version (`docrelay --version`). */
export function packageVersion(): string {
  const text = readFileSync(join(__dirname, '..', 'package.json'), 'utf8');
  return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
}

/**
 * The stack name `npx cdk deploy` gives without `-c stackName` (lib/docrelay-app.ts's DEFAULT_STACK_NAME,
 * not imported: that module loads aws-cdk-lib; a test keeps the two equal).
 */
const DEFAULT_STACK_NAME = 'DocRelay';

/** `--header name:value`, `--query k=v`: repeated options collect into a list. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Where an action reports its exit code. */
type Done = (code: number) => void;

// Loaded with require() so that tsx and Jest resolve the TypeScript module the same way, and only on use.
const load = {
  dev: () => require('./commands/dev') as typeof import('./commands/dev'),
  emulator: () => require('./commands/emulator') as typeof import('./commands/emulator'),
  workspace: () => require('./commands/workspace') as typeof import('./commands/workspace'),
  templates: () => require('./commands/templates') as typeof import('./commands/templates'),
  check: () => require('./commands/check') as typeof import('./commands/check'),
  map: () => require('./commands/map') as typeof import('./commands/map'),
  send: () => require('./commands/send') as typeof import('./commands/send'),
  putEvent: () => require('./commands/put-event') as typeof import('./commands/put-event'),
  asanaHandshake: () => require('./commands/asana-handshake') as typeof import('./commands/asana-handshake'),
  jobs: () => require('./commands/jobs') as typeof import('./commands/jobs'),
  replay: () => require('./commands/replay') as typeof import('./commands/replay'),
  dlq: () => require('./commands/dlq') as typeof import('./commands/dlq'),
  init: () => require('./commands/init') as typeof import('./commands/init'),
  tail: () => require('./commands/tail') as typeof import('./commands/tail'),
  console: () => require('./commands/console') as typeof import('./commands/console'),
  smoke: () => require('./commands/smoke') as typeof import('./commands/smoke'),
};

/** A whole number option within bounds, else a usage error (exit 2). */
export function intOption(min: number, max: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`It must be a whole number from ${min} to ${max}.`);
    }
    return value;
  };
}

/** Lines joined into one (commander puts a suggestion on a line of its own). */
const oneLine = (text: string): string =>
  text
    .trim()
    .split(/\s*\n\s*/)
    .join(' ');

/**
 * A command that only groups others (`jobs`, `templates`, `dlq`). Run without one of them it fails with a
 * one-line usage error naming them, where commander would print its whole help on stderr.
 */
class CommandGroup extends Command {
  override help(context?: HelpContext): never;
  /** @deprecated commander's old form, kept for its typings. */
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'object' && context.error === true) {
      const names = this.commands.map((command) => command.name());
      this.error(`error: missing command for docrelay ${this.name()}: ${names.join(', ')}`, {
        exitCode: 2,
        code: 'docrelay.missingCommand',
      });
    }
    return super.help(context as HelpContext);
  }
}

/**
 * Builds the program for one run. Output goes to the context's streams; commander never exits the process
 * (exitOverride), and each action hands its exit code to `done`.
 */
export function buildProgram(ctx: CommandContext, done: Done): Command {
  const program = new Command('docrelay');
  program
    .description(
      'Turn webhooks into documents stored in Amazon S3: the local stack and the operator commands.',
    )
    .version(packageVersion(), '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      // A usage error is one line, with where to look: a suggestion ("(Did you mean send?)") joins it.
      outputError: (text, write) => write(`${oneLine(text)} (add --help for usage)\n`),
    })
    .showSuggestionAfterError(true)
    .configureHelp({ helpWidth: 110 })
    .addHelpText(
      'after',
      '\nLocal commands find the running stack through <DOCRELAY_DATA_DIR>/endpoints.json; set DOCRELAY_TABLE,\n' +
        'DOCRELAY_QUEUE_URL, DOCRELAY_DLQ_URL and DOCRELAY_BUCKET to work on a deployed stack instead.',
    );

  program
    .command('dev')
    .description('run the local stack in the foreground (as npm start)')
    .option('--quiet', 'print only the ready lines, not one line per request and event')
    .option('--json-logs', "print the handlers' structured JSON logs instead of readable lines")
    .option(
      '--templates <dir>',
      "the emulator's templates folder (one sub-folder with a manifest per template)",
    )
    .action(async (options: { quiet?: boolean; jsonLogs?: boolean; templates?: string }) => {
      done(await load.dev().dev(ctx, options));
    });

  program
    .command('emulator')
    .description('run only the Document Generation Service emulator')
    .addOption(
      new Option('--port <n>', 'port to listen on (0 picks a free one)')
        .default(4010)
        .argParser(intOption(0, 65535)),
    )
    .option('--host <address>', 'interface to listen on', '127.0.0.1')
    .addOption(
      new Option('--link-ttl <seconds>', 'lifetime of download links in seconds (default 3600)').argParser(
        intOption(1, 7 * 24 * 3600),
      ),
    )
    .option('--templates <dir>', 'templates folder (one sub-folder with a manifest per template)')
    .addOption(
      new Option('--create-status <status>', 'status of a successful create document (default 201)').choices([
        '200',
        '201',
      ]),
    )
    .addOption(
      new Option('--link-field <field>', 'field of the download link (default downloadUrl)').choices([
        'downloadUrl',
        'downloadURL',
      ]),
    )
    .addOption(
      new Option('--payload-too-large <message>', 'message of a 413').choices([
        'Request entity too large',
        'Payload too large',
      ]),
    )
    // For tests and benchmarks.
    .addOption(new Option('--extra-templates <n>').hideHelp().argParser(intOption(0, 100_000)))
    .addOption(new Option('--synthetic-file-bytes <n>').hideHelp().argParser(intOption(0, 2 ** 40)))
    .addOption(new Option('--seed <n>').hideHelp().argParser(intOption(0, 2 ** 32 - 1)))
    .action(async (options: import('./commands/emulator').EmulatorCliOptions) => {
      done(await load.emulator().run(ctx, options));
    });

  program
    .command('init')
    .description('add an integration: a config stanza, its local secret and a sample payload')
    .argument(
      '<integrationId>',
      'the new integration id: 1-64 letters, digits, "-" or "_", starting with a letter or digit',
    )
    .requiredOption('--scheme <scheme>', 'how its sender signs webhooks (see the list below)')
    .option(
      '--template <id>',
      "the template its rule generates, read from the service check and map use: each required property is mapped to a placeholder (default: 9003, the emulator's plain note)",
    )
    .addHelpText('after', () => `\nschemes: ${load.init().schemeNames().join(', ')}\n`)
    .action(async (integrationId: string, options: { scheme: string; template?: string }) => {
      done(await load.init().init(ctx, integrationId, options));
    });

  /** A command of commands, with the program's settings (output, exit override, help). */
  const group = (name: string, description: string): Command => {
    const command = new CommandGroup(name).description(description).copyInheritedSettings(program);
    program.addCommand(command);
    return command;
  };

  program
    .command('workspace')
    .description('show the service workspace the API key belongs to')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      done(await load.workspace().workspace(ctx, options));
    });

  const templates = group('templates', 'list templates, or show one with its properties');
  templates
    .command('list')
    .description("list the service's templates")
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      done(await load.templates().listTemplates(ctx, options));
    });
  templates
    .command('show')
    .description('show one template: its files and properties')
    .argument('<templateId>', 'the template id')
    .option('--json', 'print JSON')
    .action(async (templateId: string, options: { json?: boolean }) => {
      done(await load.templates().showTemplate(ctx, templateId, options));
    });

  program
    .command('check')
    .description('validate the config and every mapping against the templates')
    .option('--offline', 'validate the config only, without the service')
    .action(async (options: { offline?: boolean }) => {
      done(await load.check().check(ctx, options));
    });

  program
    .command('map')
    .description('print the documents a payload would become; creates nothing')
    .argument('<integrationId>', 'the integration whose rules map the payload')
    .requiredOption('--payload <file>', 'the webhook body: JSON, a form, XML or text, as the ingest takes it')
    .option(
      '--content-type <type>',
      "the payload's media type (default: what send would post: the sender's own, else by extension: .json .xml .txt .form .urlencoded, else JSON)",
    )
    .option('--header <name:value>', 'a request header the rules may read (repeatable)', collect)
    .option('--query <key=value>', 'a query parameter the rules may read (repeatable)', collect)
    .option('--offline', "map against the emulator's templates in-process, without a stack or service")
    .option('--templates <dir>', 'with --offline: the templates folder to map against')
    .action(async (integrationId: string, options: import('./commands/map').MapOptions) => {
      done(await load.map().map(ctx, integrationId, options));
    });

  program
    .command('send')
    .description("sign a payload with the integration's secret, as its sender would, and post it")
    .argument('<integrationId>', 'the integration to deliver to')
    .requiredOption('--payload <file>', 'the webhook body, sent byte for byte')
    .option('--url <base>', 'base URL of the stack (default: the running local stack)')
    .option(
      '--content-type <type>',
      'the Content-Type sent (default: from the extension: .json .xml .txt .form .urlencoded, else JSON)',
    )
    .option('--header <name:value>', 'a header added after signing (repeatable)', collect)
    .option('--delivery-id <id>', "the sender's delivery id header, for schemes that carry one in a header")
    .option('--wait', 'follow the jobs until each is stored or failed (exit 1 if any failed)')
    .addOption(
      new Option('--timeout <seconds>', 'with --wait: give up after this long (exit 1)')
        .default(120)
        .argParser(intOption(1, 86_400)),
    )
    .action(async (integrationId: string, options: import('./commands/send').SendOptions) => {
      done(await load.send().send(ctx, integrationId, options));
    });

  program
    .command('put-event')
    .description('feed an EventBridge event to an integration with an eventBridge block')
    .argument('<integrationId>', 'the integration whose rule would deliver the event')
    .requiredOption('--event <file>', 'the event (JSON with source, detail-type and detail)')
    .addHelpText(
      'after',
      "\nLocally: posts the event to the running stack's event path (as the integration's EventBridge rule would).\n" +
        "On AWS (DOCRELAY_TABLE... set): PutEvents to DOCRELAY_EVENT_BUS (or the default bus); the rule's\n" +
        'eventPattern decides whether it becomes a delivery.',
    )
    .action(async (integrationId: string, options: { event: string }) => {
      done(await load.putEvent().putEvent(ctx, integrationId, options));
    });

  program
    .command('asana-handshake')
    .description("open a window in which an asana integration keeps the X-Hook-Secret of Asana's handshake")
    .argument('<integrationId>', 'the asana integration')
    .option('--minutes <n>', `how long the window stays open (1-60)`, '10')
    .action(async (integrationId: string, options: { minutes?: string }) => {
      done(await load.asanaHandshake().asanaHandshake(ctx, integrationId, options));
    });

  const jobs = group('jobs', 'find, show and download jobs');
  jobs
    .command('list')
    .description('list jobs, newest first')
    .option('--integration <id>', 'only this integration')
    .addOption(
      new Option('--status <status>', 'only jobs in this status').choices([
        'queued',
        'processing',
        'created',
        'stored',
        'failed',
      ]),
    )
    .option(
      '--since <time>',
      'only jobs received at or after this ISO 8601 time, or a duration (30m, 2h, 1d)',
    )
    .option('--delivery <deliveryId>', 'only the jobs of this delivery')
    .addOption(new Option('--limit <n>', 'at most this many jobs').default(50).argParser(intOption(1, 1000)))
    .option('--json', 'print JSON')
    .action(async (options: import('./commands/jobs').ListOptions) => {
      done(await load.jobs().listJobs(ctx, options));
    });
  jobs
    .command('show')
    .description('show a job: status, attempts, document, files and error')
    .argument('<jobId>', 'the job id')
    .option('--json', 'print the jobs API JSON')
    .action(async (jobId: string, options: { json?: boolean }) => {
      done(await load.jobs().showJob(ctx, jobId, options));
    });
  jobs
    .command('download')
    .description("write a stored job's files, byte for byte")
    .argument('<jobId>', 'the job id')
    .option('--out <dir>', 'the folder to write them to', '.')
    .action(async (jobId: string, options: { out: string }) => {
      done(await load.jobs().downloadJob(ctx, jobId, options));
    });

  program
    .command('tail')
    .description('print a line whenever a job appears or changes status, until Ctrl-C')
    .option('--integration <id>', 'only this integration')
    .addOption(new Option('--interval <seconds>', 'how often to look').default(2).argParser(intOption(1, 60)))
    .option('--json', 'one JSON object per line')
    .action(async (options: import('./commands/tail').TailOptions) => {
      done(await load.tail().run(ctx, options));
    });

  program
    .command('console')
    .description(
      'serve the web console of a deployed stack on loopback (the local stack serves its own at /)',
    )
    .option(
      '--stack <name>',
      'the CloudFormation stack of the deployment; the default is the name npx cdk deploy gives without -c stackName',
      DEFAULT_STACK_NAME,
    )
    .addOption(new Option('--port <n>', 'the loopback port').default(3100).argParser(intOption(1, 65_535)))
    .option(
      '--sealing-secret <name>',
      'the sealing secret, to show mapped data (default DOCRELAY_SEALING_SECRET)',
    )
    .action(async (options: import('./commands/console').ConsoleOptions) => {
      done(await load.console().runConsole(ctx, options));
    });

  program
    .command('smoke')
    .description(
      "after a deploy: send a signed test delivery, wait until it is stored, check the objects' SHA-256, clean up",
    )
    .option(
      '--stack <name>',
      'the CloudFormation stack of the deployment; the default is the name npx cdk deploy gives without -c stackName',
      DEFAULT_STACK_NAME,
    )
    .option('--local', 'test the running local stack instead (npm start)')
    .option(
      '--integration <id>',
      'the integration to deliver to (default: the one the config marks with smoke)',
    )
    .option('--payload <file>', "the body to send (default: the marked integration's smoke.payload)")
    .option(
      '--secret-name <name>',
      "the signing secret's name in Secrets Manager (default: the stack's name for the config's secret)",
    )
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the jobs to be stored')
        .default(120)
        .argParser(intOption(1, 3600)),
    )
    .option('--keep', 'leave the objects and job records in place')
    .addHelpText(
      'after',
      '\nExit 0 when every job was stored and every object matched its SHA-256; then the objects (the versions\n' +
        "written) and the delivery's job table items are deleted (not with --keep). Exit 1 otherwise, leaving\n" +
        "everything in place for docrelay jobs show. With --stack it uses the caller's AWS credentials: it reads\n" +
        "the stack's outputs and the signing secret, reads the table and bucket, and deletes what it made.",
    )
    .action(async (options: import('./commands/smoke').SmokeOptions) => {
      done(await load.smoke().smoke(ctx, options));
    });

  program
    .command('replay')
    .description('run a failed job again from its last checkpoint')
    .argument('<jobId>', 'the job id')
    .option('--fresh', "from the start: a new document (also for a stored job), replacing the job's objects")
    .action(async (jobId: string, options: { fresh?: boolean }) => {
      done(await load.replay().replay(ctx, jobId, options));
    });

  const dlq = group('dlq', "the jobs' dead-letter queue");
  const maxOption = (): Option =>
    new Option('--max <n>', 'messages to look at').default(100).argParser(intOption(1, 100_000));
  dlq
    .command('list')
    .description('what is in the dead-letter queue, with each job state')
    .option('--json', 'print JSON')
    .addOption(maxOption())
    .action(async (options: { json?: boolean; max: number }) => {
      done(await load.dlq().listDlq(ctx, options));
    });
  dlq
    .command('redrive')
    .description('send the messages back to the worker (failed jobs are reset as replay does)')
    .addOption(maxOption())
    .action(async (options: { max: number }) => {
      done(await load.dlq().redriveDlq(ctx, options));
    });

  return program;
}

/** Every runnable command path (`send`, `jobs list`, ...), for the help tests and the README check. */
export function commandPaths(program: Command): string[][] {
  const paths: string[][] = [];
  const visit = (command: Command, prefix: string[]): void => {
    for (const sub of command.commands) {
      const path = [...prefix, sub.name()];
      if (sub.commands.length === 0) paths.push(path);
      else visit(sub, path);
    }
  };
  visit(program, []);
  return paths;
}
