/**
 * The CLI's help: --version, and --help/-h on every command answer with usage and exit 0; the README's CLI
 * table lists every command with the options its help gives.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buildProgram, commandPaths, packageVersion } from '../../../bin/cli-program';
import { DEFAULT_STACK_NAME } from '../../../lib/docrelay-app';
import { runCli } from '../../helpers/run-cli';

const root = join(__dirname, '../../..');

// No stack, no config needed: help never loads a command's module.
const cli = (argv: string[]) => runCli(argv, { cwd: root, env: { DOCRELAY_DATA_DIR: '/nonexistent' } });

const program = buildProgram(
  { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: root },
  () => {},
);
const paths = commandPaths(program);

/** The options a command's help lists, hidden ones left out. */
function visibleOptions(path: readonly string[]) {
  let command = program;
  for (const name of path) command = command.commands.find((c) => c.name() === name) ?? command;
  return command.options.filter((o) => !o.hidden && o.long !== '--help');
}

/** The options a command's help lists (long names). */
const optionsOf = (path: readonly string[]): string[] => visibleOptions(path).map((o) => o.long as string);

/**
 * The options as the help spells them, value placeholder included and without a short alias, in brackets
 * unless required: `--payload <file>`, `[--port <n>]`.
 */
const spelledOptionsOf = (path: readonly string[]): string[] =>
  visibleOptions(path).map((o) => {
    const flags = o.flags.replace(/^-[A-Za-z], /, '');
    return o.mandatory ? ` ${flags}` : `[${flags}]`;
  });

describe('docrelay --version', () => {
  it.each([['--version'], ['-v']])('%s prints the package version and exits 0', async (flag) => {
    const result = await cli([flag]);
    expect(result).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('docrelay --help', () => {
  it('lists every command and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: docrelay \[options\] \[command\]/);
    for (const [name] of paths) expect(result.stdout).toContain(`  ${name}`);
  });

  it('without a command prints the help and exits 2', async () => {
    const result = await cli([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^Usage: docrelay/);
  });

  it('knows every command the README names', () => {
    expect(paths.map((path) => path.join(' ')).sort()).toEqual(
      [
        'asana-handshake',
        'check',
        'console',
        'dev',
        'dlq list',
        'dlq redrive',
        'emulator',
        'init',
        'jobs download',
        'jobs list',
        'jobs show',
        'map',
        'put-event',
        'replay',
        'send',
        'smoke',
        'tail',
        'templates list',
        'templates show',
        'workspace',
      ].sort(),
    );
  });

  it.each(
    paths.flatMap((path) => [
      [[...path, '--help']],
      [[...path, '-h']],
      // `docrelay help send`, `docrelay jobs help list`
      [[...path.slice(0, -1), 'help', ...path.slice(-1)]],
    ]),
  )('%j prints the usage and options, exit 0', async (argv) => {
    const path = argv.filter((arg) => arg !== '--help' && arg !== '-h' && arg !== 'help');
    const result = await cli(argv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: docrelay ${path.join(' ')} `));
    for (const option of optionsOf(path)) expect(result.stdout).toContain(option);
  });
});

describe('docrelay console', () => {
  it('takes the stack the CDK app deploys by default when --stack is left out, and says so', async () => {
    const stack = program.commands
      .find((command) => command.name() === 'console')
      ?.options.find((option) => option.long === '--stack');
    expect(stack?.mandatory).toBe(false);
    expect(stack?.defaultValue).toBe(DEFAULT_STACK_NAME);
    expect((await cli(['console', '--help'])).stdout).toContain(`(default: "${DEFAULT_STACK_NAME}")`);
  });
});

describe('usage errors', () => {
  it.each([
    [['sned'], "error: unknown command 'sned' (Did you mean send?) (add --help for usage)"],
    [['jobs', 'lst'], "error: unknown command 'lst' (Did you mean list?) (add --help for usage)"],
    [
      ['jobs', 'list', '--jsn'],
      "error: unknown option '--jsn' (Did you mean --json?) (add --help for usage)",
    ],
  ])('%j is one line with its suggestion, exit 2', async (argv, line) => {
    const result = await cli(argv);
    expect(result).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
  });

  it.each([
    ['jobs', 'list, show, download'],
    ['templates', 'list, show'],
    ['dlq', 'list, redrive'],
  ])('%s without its command names the commands on one line, exit 2', async (name, names) => {
    const result = await cli([name]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: missing command for docrelay ${name}: ${names} (add --help for usage)\n`,
    });
  });
});

describe("the README's CLI table", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## The CLI'),
    readme.indexOf('### Local environment variables'),
  );
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));

  it.each(paths.map((path) => [path.join(' ')]))(
    'has a row for `%s` with every option of its help, spelled as the help spells it',
    (name) => {
      const path = name.split(' ');
      const row = rows.find((line) => line.startsWith(`| \`${name}`));
      expect(row).toBeDefined();
      // `[--link-field <field>]`: the option with its value placeholder, as `docrelay <command> --help` shows it.
      for (const option of spelledOptionsOf(path)) expect(row).toContain(option);
    },
  );

  it('names no command the CLI does not have', () => {
    const known = new Set(paths.map((path) => path.join(' ')));
    for (const row of rows) {
      const name = /^\| `([a-z-]+(?: (?:list|show|download|redrive))?)/.exec(row)?.[1];
      expect(known.has(name ?? row)).toBe(true);
    }
  });
});
