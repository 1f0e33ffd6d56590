/**
 * Error names survive minification: Lambda bundles do not keep names (lib/docrelay-function.ts), so every
 * error class under functions/ declares its own `name`, and an instance reports it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DocrelayError } from '../../../functions/commons/errors';
import { DeliveryRefusedError } from '../../../functions/core/errors';
import { DocgenRateLimitedError } from '../../../functions/docgen/errors';

const FUNCTIONS = join(__dirname, '../../../functions');

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );

describe('error names', () => {
  it('are declared by every error class in functions/', () => {
    const classes: string[] = [];
    const missing: string[] = [];
    for (const file of sources(FUNCTIONS)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/class (\w+) extends \w*Error\b[^{]*\{/g)) {
        const name = match[1] as string;
        classes.push(name);
        // The class's own body, up to the next class in the file.
        const body =
          text.slice((match.index ?? 0) + match[0].length).split(/\nexport class |\nclass /)[0] ?? '';
        if (!body.includes(`override name = '${name}';`)) {
          missing.push(`${relative(FUNCTIONS, file)}: ${name}`);
        }
      }
    }
    expect(classes.length).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });

  it('are the class names on instances, through subclasses', () => {
    expect(new DocrelayError('X', 'x').name).toBe('DocrelayError');
    expect(new DeliveryRefusedError('malformed-body', 'x').name).toBe('DeliveryRefusedError');
    expect(new DocgenRateLimitedError('slow down').name).toBe('DocgenRateLimitedError');
  });
});
