/** Where the functions are bundled from: the repository in a clone, the installing app when docrelay is a package. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundlingRoot, functionEntry, PROJECT_ROOT } from '../../lib/docrelay-function';
import { ROOT } from './support';

describe('bundlingRoot', () => {
  const work = mkdtempSync(join(tmpdir(), 'docrelay-bundling-root-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test('in a clone, the package root is the repository, bundled under its own package-lock.json', () => {
    expect(PROJECT_ROOT).toBe(ROOT);
    expect(functionEntry('worker')).toBe(join(ROOT, 'functions', 'handlers', 'worker', 'handler.ts'));
    expect(bundlingRoot()).toEqual({ projectRoot: ROOT, lockFile: join(ROOT, 'package-lock.json') });
  });

  test('installed, it is the app above node_modules/docrelay, with whichever lock file the app has', () => {
    const app = join(work, 'app');
    const installed = join(app, 'node_modules', 'docrelay');
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(installed, 'package.json'), '{"name":"docrelay"}');
    writeFileSync(join(app, 'yarn.lock'), '');
    expect(bundlingRoot(installed)).toEqual({ projectRoot: app, lockFile: join(app, 'yarn.lock') });
  });

  test('with no lock file above the package, it says what is missing', () => {
    const bare = join(work, 'bare', 'node_modules', 'docrelay');
    mkdirSync(bare, { recursive: true });
    // A temporary folder has no lock file above it on a sane machine; the test would say so if it had one.
    expect(() => bundlingRoot(bare)).toThrow(
      /no lock file \(pnpm-lock.yaml, .*package-lock.json\) at or above/,
    );
  });
});
