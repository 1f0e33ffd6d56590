/**
 * The JSON Schema of the configuration file, generated from the zod schema, for editor completion
 * (`# yaml-language-server: $schema=./docrelay.schema.json`). The committed copy is checked by a test.
 */
import { z } from 'zod';
import { DocrelayConfigSchema } from './schema';

/** Path of the committed JSON Schema, relative to the repository root. */
export const CONFIG_JSON_SCHEMA_PATH = 'config/docrelay.schema.json';

/** The JSON Schema text (what `npm run schema` writes), ending with a newline. */
export function buildConfigJsonSchema(): string {
  // io 'input' describes the file as written: keys with defaults are optional.
  // draft-07: the draft the YAML language server and most editors understand best.
  const schema = z.toJSONSchema(DocrelayConfigSchema, { io: 'input', target: 'draft-07' });
  const document = {
    ...schema,
    $id: 'https://github.com/docrelay/docrelay/config/docrelay.schema.json',
    title: 'docrelay configuration',
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
