/** Runs a bench TypeScript file (through tsx) or a built bundle in a fresh Node process and returns its stdout. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/** Options of `runTsChild`. */
export interface ChildOptions {
  /** Killed after this long. @default 120_000 */
  readonly timeoutMs?: number;
  /** Extra Node flags, e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs `node --import tsx <file> ...args` from the repository root; rejects on a non-zero exit. */
export function runTsChild(
  file: string,
  args: readonly string[],
  options: ChildOptions = {},
): Promise<string> {
  return runNodeChild(['--import', 'tsx', resolve(ROOT, file), ...args], { ...options, label: file });
}

/**
 * Runs `node [nodeArgs] ...argv` from the repository root and returns its stdout; rejects on a non-zero exit
 * (with the end of its stderr) or when killed after `timeoutMs`.
 */
export function runNodeChild(
  argv: readonly string[],
  options: ChildOptions & { readonly label?: string } = {},
): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--no-warnings', ...argv], {
      cwd: ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(out);
      else reject(new Error(`${options.label ?? argv[0]} exited ${code ?? signal}: ${err.slice(-2000)}`));
    });
  });
}

/** The last line of a child's output, parsed as JSON. */
export function lastJsonLine(out: string): unknown {
  const lines = out.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}
