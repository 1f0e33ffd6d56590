/**
 * The `docrelay` CLI: parses the command line with the program of cli-program.ts and runs the command, which
 * resolves to the exit code. Failures are one line on stderr, never a stack trace: 2 for usage errors,
 * 1 otherwise.
 */
import { CommanderError } from 'commander';
import { buildProgram } from './cli-program';
import { CliError, type CommandContext } from './commands/types';

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function main(argv: string[], ctx: CommandContext): Promise<number> {
  let code = 0;
  const program = buildProgram(ctx, (exitCode) => {
    code = exitCode;
  });
  if (argv.length === 0) {
    program.outputHelp();
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed the help, the version or the usage error.
      return error.exitCode === 0 ? 0 : 2;
    }
    const message = awsSetupProblem(error) ?? (error instanceof Error ? error.message : String(error));
    const name = argv.find((arg) => !arg.startsWith('-')) ?? 'docrelay';
    ctx.stderr.write(`docrelay ${name}: ${message.split('\n')[0]}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

/**
 * What to do when the AWS SDK could not call AWS at all (no credentials, expired ones, no region), found
 * anywhere in the error's cause chain; undefined for any other error.
 */
export function awsSetupProblem(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth += 1) {
    const text = `${current.name} ${current.message}`;
    if (current.name === 'CredentialsProviderError' || /could not load credentials/i.test(text)) {
      return 'no AWS credentials found: set AWS_PROFILE (or run aws sso login, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) for the account of the stack that DOCRELAY_TABLE... name';
    }
    if (/ExpiredToken|security token included in the request is (expired|invalid)/i.test(text)) {
      return 'the AWS credentials have expired or are invalid: renew them (e.g. aws sso login) and run the command again';
    }
    if (/region is missing/i.test(text)) {
      return 'no AWS region: set AWS_REGION (or AWS_PROFILE with a region) for the stack that DOCRELAY_TABLE... name';
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
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
