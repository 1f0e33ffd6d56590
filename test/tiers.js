// `npm test`: the checks and the test tiers in order, fastest first, each bounded by its own time limit.
// Every tier prints `tier <name>: N passed, N failed`; the last line is the total. A failed check counts as one
// failure with no tests run, and later tiers still run, so the total is a full count; the exit code is 1 when
// anything failed. The whole run has a budget too (TIERS_BUDGET_S, default 780 s): a tier gets at most what is
// left of it, and one that finds none left counts as one failure, not run. `node test/tiers.js unit infra`
// runs only the tiers named.
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const bin = (name) => join(__dirname, '..', 'node_modules', '.bin', name);
const jestRun = (project) => [bin('jest'), '--selectProjects', project];

/** The tiers, in the order they run; `optional` ones run only when their Jest project exists. */
const TIERS = [
  { name: 'lint', command: [bin('biome'), 'check', '.'], limitS: 60 },
  { name: 'types', command: [bin('tsc'), '--noEmit', '-p', '.'], limitS: 180 },
  { name: 'unit', command: jestRun('unit'), limitS: 180, project: 'unit' },
  { name: 'infra', command: jestRun('infra'), limitS: 240, project: 'infra' },
  { name: 'aws', command: jestRun('aws'), limitS: 180, project: 'aws', optional: true },
  { name: 'e2e', command: jestRun('e2e'), limitS: 540, project: 'e2e' },
  // The soaks print their figures (test/e2e/helpers/reliability.ts, printSummary): repeated in the closing lines.
  {
    name: 'soak',
    command: jestRun('soak'),
    limitS: 300,
    project: 'soak',
    figures: /^\s*(soak[\w-]*: \w+=.*)$/,
  },
];

const COUNT = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/;

/** The last `N passed, N failed[, N skipped]` line of a Jest run's output, or undefined when it printed none. */
function lastCount(output) {
  let found;
  for (const line of output.split('\n')) {
    const match = COUNT.exec(line.trim());
    if (match) found = { passed: Number(match[1]), failed: Number(match[2]), skipped: Number(match[3] ?? 0) };
  }
  return found;
}

/**
 * A tier's count from how its command ended: a check (no count line) is 0 or 1 failed; a Jest run that ended
 * badly (a hang cut off, a crash, a suite that failed to load) counts at least one failure, even when every
 * test it reported passed.
 */
function tierCount(output, exitCode, timedOut) {
  const count = lastCount(output) ?? { passed: 0, failed: 0, skipped: 0 };
  const bad = timedOut || exitCode !== 0;
  return bad && count.failed === 0 ? { ...count, failed: count.failed + 1 } : count;
}

/** The lines of `output` that match `pattern`, as its first group captures them. */
function figures(output, pattern) {
  return output.split('\n').flatMap((line) => {
    const match = pattern.exec(line);
    return match ? [match[1]] : [];
  });
}

/** Sums tier counts. */
function total(counts) {
  return counts.reduce(
    (sum, c) => ({
      passed: sum.passed + c.passed,
      failed: sum.failed + c.failed,
      skipped: sum.skipped + c.skipped,
    }),
    { passed: 0, failed: 0, skipped: 0 },
  );
}

/** `N passed, N failed` (with `, N skipped` when any were). */
const format = (c) => `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`;

/** The Jest projects jest.config.js declares. */
function projects() {
  const config = require(join(__dirname, '..', 'jest.config.js'));
  return new Set((config.projects ?? []).map((p) => p.displayName));
}

/** Runs one command in a process group of its own, echoing its output; kills the group at the time limit. */
function run(command, limitS) {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let timedOut = false;
    const echo = (stream) => (chunk) => {
      output += chunk;
      stream.write(chunk);
    };
    child.stdout.on('data', echo(process.stdout));
    child.stderr.on('data', echo(process.stderr));
    const kill = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group has ended already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 10_000).unref();
    }, limitS * 1000);
    child.on('error', (error) => {
      output += `\n${error.message}\n`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ output, exitCode: code ?? 1, timedOut });
    });
  });
}

async function main(names) {
  const known = new Set(TIERS.map((t) => t.name));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0) {
    process.stderr.write(`tiers: unknown tier ${unknown.join(', ')} (known: ${[...known].join(', ')})\n`);
    return 2;
  }
  const declared = projects();
  const chosen = TIERS.filter((t) => names.length === 0 || names.includes(t.name));
  const lines = [];
  const counts = [];
  const deadline = Date.now() + Number(process.env.TIERS_BUDGET_S ?? 780) * 1000;
  for (const tier of chosen) {
    if (tier.optional && !declared.has(tier.project)) {
      lines.push(`tier ${tier.name}: not run (no '${tier.project}' Jest project)`);
      continue;
    }
    const limitS = Math.min(tier.limitS, Math.floor((deadline - Date.now()) / 1000));
    if (limitS < 5) {
      counts.push({ passed: 0, failed: 1, skipped: 0 });
      lines.push(`tier ${tier.name}: 0 passed, 1 failed (not run: the run's time budget is spent)`);
      process.stdout.write(`${lines.at(-1)}\n`);
      continue;
    }
    process.stdout.write(`\n=== tier ${tier.name}: ${tier.command.slice(1).join(' ')} (limit ${limitS} s)\n`);
    const started = Date.now();
    const result = await run(tier.command, limitS);
    const count = tierCount(result.output, result.exitCode, result.timedOut);
    counts.push(count);
    const seconds = Math.round((Date.now() - started) / 1000);
    const note = result.timedOut ? `, cut off at its ${limitS} s limit` : '';
    const line = `tier ${tier.name}: ${format(count)} (${seconds} s${note})`;
    lines.push(line);
    process.stdout.write(`${line}\n`);
    if (tier.figures) lines.push(...figures(result.output, tier.figures).map((f) => `  ${f}`));
  }
  const sum = total(counts);
  process.stdout.write(`\n${lines.join('\n')}\ntotal: ${format(sum)}\n${format(sum)}\n`);
  return sum.failed > 0 ? 1 : 0;
}

module.exports = { lastCount, tierCount, total, format, figures, TIERS };

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
