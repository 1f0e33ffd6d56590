import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, lockDataDir } from '../../../local/state-files';

describe('lockDataDir', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docrelay-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the directory, writes its pid, and gives it back on release', async () => {
    const release = await lockDataDir(dir);
    expect((await readFile(join(dir, 'stack.pid'), 'utf8')).trim()).toBe(String(process.pid));
    await release();
    await expect(readFile(join(dir, 'stack.pid'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a directory a live process holds, naming it', async () => {
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    try {
      await writeFile(join(dir, 'stack.pid'), `${holder.pid}\n`);
      const attempt = lockDataDir(dir);
      await expect(attempt).rejects.toThrow(DataDirInUseError);
      await expect(lockDataDir(dir)).rejects.toThrow(`(pid ${holder.pid}) is using ${dir}`);
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock left by a process that died', async () => {
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    await writeFile(join(dir, 'stack.pid'), `${gone.pid}\n`);
    const release = await lockDataDir(dir);
    expect((await readFile(join(dir, 'stack.pid'), 'utf8')).trim()).toBe(String(process.pid));
    await release();
  });
});
