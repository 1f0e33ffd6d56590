import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildConfigJsonSchema, CONFIG_JSON_SCHEMA_PATH } from '../../../functions/config/json-schema';

const root = resolve(__dirname, '../../..');

describe('config/docrelay.schema.json', () => {
  it('is current with the zod schema (run npm run schema when this fails)', () => {
    const committed = readFileSync(resolve(root, CONFIG_JSON_SCHEMA_PATH), 'utf8');
    expect(committed).toBe(buildConfigJsonSchema());
  });

  it('describes the file as written: strict, with defaults optional', () => {
    const schema = JSON.parse(buildConfigJsonSchema()) as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { required?: string[] }>;
    };
    expect(schema.required).toEqual(['service', 'integrations']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.service?.required).toEqual(['baseUrl']);
  });

  it('is referenced by the shipped config for editor completion', () => {
    const yaml = readFileSync(resolve(root, 'config/docrelay.yaml'), 'utf8');
    expect(yaml.split('\n')[0]).toBe('# yaml-language-server: $schema=./docrelay.schema.json');
  });
});
