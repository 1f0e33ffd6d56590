import { parseSince } from '../../../../bin/commands/jobs';
import { CliError } from '../../../../bin/commands/types';
import { runCli } from '../../../helpers/run-cli';

const now = new Date('2026-03-10T12:00:00.000Z');

describe('parseSince', () => {
  it.each([
    ['2026-02-28', '2026-02-28T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-02-28T10:30:00Z', '2026-02-28T10:30:00.000Z'],
    ['2026-02-28T10:30:00.250+02:00', '2026-02-28T08:30:00.250Z'],
    ['2026-12-31T23:59:59Z', '2026-12-31T23:59:59.000Z'],
    ['90s', '2026-03-10T11:58:30.000Z'],
    ['2h', '2026-03-10T10:00:00.000Z'],
  ])('takes %s as %s', (text, expected) => {
    expect(parseSince(text, now)).toBe(expected);
  });

  it.each([
    ['2026-02-30'],
    ['2026-02-29'],
    ['2026-04-31T10:00:00Z'],
    ['2026-02-31T10:00:00Z'],
    ['2026-13-01'],
    ['2026-00-10'],
    ['2026-04-30junk'],
    ['yesterday'],
  ])('refuses %s as a usage error', (text) => {
    let error: unknown;
    try {
      parseSince(text, now);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toContain(`"${text}"`);
  });
});

describe('docrelay jobs list --since', () => {
  it('refuses February 30 on one line with exit 2, before looking for a stack', async () => {
    const { code, stderr: text } = await runCli(['jobs', 'list', '--since', '2026-02-30'], {
      cwd: '/nonexistent',
      env: { DOCRELAY_DATA_DIR: '/nonexistent' },
    });
    expect(code).toBe(2);
    expect(text).toBe(
      'docrelay jobs: --since must be a date that exists, got "2026-02-30" (2026-02 has 28 days)\n',
    );
  });
});
