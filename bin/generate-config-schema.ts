/**
 * Writes config/docrelay.schema.json from the zod schema (`npm run schema`); with `--check`, only says whether
 * the committed file is current (exit 1 when stale).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildConfigJsonSchema, CONFIG_JSON_SCHEMA_PATH } from '../functions/config/json-schema';

/** Generates (or checks) the schema file; returns the exit code. */
export function generateConfigSchema(
  argv: readonly string[],
  root: string = resolve(__dirname, '..'),
): number {
  const target = resolve(root, CONFIG_JSON_SCHEMA_PATH);
  const text = buildConfigJsonSchema();
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // A missing file is simply stale.
    }
    if (current === text) return 0;
    process.stderr.write(`${CONFIG_JSON_SCHEMA_PATH} is stale: run npm run schema\n`);
    return 1;
  }
  writeFileSync(target, text);
  process.stdout.write(`wrote ${CONFIG_JSON_SCHEMA_PATH}\n`);
  return 0;
}

if (require.main === module) {
  process.exitCode = generateConfigSchema(process.argv.slice(2));
}
