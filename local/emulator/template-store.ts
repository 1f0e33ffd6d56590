/**
 * The emulator's templates: loaded from a folder of sample templates (one sub-folder per template, with a
 * manifest and its files), plus synthetic ones for pagination and large-file benchmarks. Properties and
 * each file's usedProperties are derived from the tags present in the files.
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Template, TemplateFile, TemplateProperty } from '../../functions/docgen/types';
import { docxMimeType } from './docx-package';
import { parseManifest, type TemplateManifest } from './manifest';
import { tagsInDocx, tagsInText } from './tag-scanner';

/** How a template file is rendered. */
export type TemplateFileKind = 'docx' | 'text';

/** A template file with its content. */
export interface StoredTemplateFile {
  /** The resource as the API shows it, usedProperties included. */
  readonly resource: TemplateFile & { usedProperties: NonNullable<TemplateFile['usedProperties']> };
  readonly kind: TemplateFileKind;
  readonly content: Buffer;
  /** Generated files are padded to this many bytes, streamed (text files only). */
  readonly padToBytes?: number;
}

/** A template with its files. */
export interface StoredTemplate {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly createdDateTime: string;
  readonly active: boolean;
  readonly properties: TemplateProperty[];
  readonly files: StoredTemplateFile[];
}

/** Folder of the sample templates shipped with the emulator. */
export const sampleTemplatesDir = join(__dirname, 'templates');

const mimeTypes: Record<string, string> = { '.docx': docxMimeType, '.txt': 'text/plain' };

function kindOf(mimeType: string, filename: string): TemplateFileKind {
  if (mimeType === docxMimeType) return 'docx';
  if (mimeType.startsWith('text/')) return 'text';
  throw new Error(`template file ${filename}: unsupported MIME type ${mimeType} (use .docx or .txt)`);
}

/** Builds a template from its manifest and file contents (file name to bytes). */
export function buildTemplate(
  manifest: TemplateManifest,
  contents: ReadonlyMap<string, Buffer>,
): StoredTemplate {
  const propertyOrder: string[] = [];
  const files = manifest.files.map((file): StoredTemplateFile => {
    const content = contents.get(file.filename);
    if (content === undefined) throw new Error(`template ${manifest.id}: missing file ${file.filename}`);
    const mimeType = file.mimeType ?? mimeTypes[extname(file.filename).toLowerCase()];
    if (mimeType === undefined) throw new Error(`template ${manifest.id}: no MIME type for ${file.filename}`);
    const kind = kindOf(mimeType, file.filename);
    if (file.padToBytes !== undefined && kind !== 'text') {
      // Filler appended to a zip would hide its central directory: only text files can be padded.
      throw new Error(`template ${manifest.id}: padToBytes needs a text file, not ${file.filename}`);
    }
    const tags = kind === 'docx' ? tagsInDocx(content) : tagsInText(content.toString('utf8'));
    for (const name of file.required) {
      if (!tags.includes(name)) {
        throw new Error(`template ${manifest.id}: ${file.filename} requires "${name}" but has no such tag`);
      }
    }
    for (const tag of tags) if (!propertyOrder.includes(tag)) propertyOrder.push(tag);
    const createdDateTime = file.createdDateTime ?? manifest.createdDateTime;
    return {
      kind,
      content,
      padToBytes: file.padToBytes,
      resource: {
        id: file.id,
        mimeType,
        filename: file.filename,
        size: content.length,
        createdDateTime,
        lastModifiedDateTime: file.lastModifiedDateTime ?? createdDateTime,
        usedProperties: tags.map((name) => ({ name, required: file.required.includes(name) })),
      },
    };
  });
  for (const name of Object.keys(manifest.properties)) {
    if (!propertyOrder.includes(name)) {
      throw new Error(`template ${manifest.id}: the manifest describes "${name}" but no file has that tag`);
    }
  }
  // Described properties in the manifest's order, then undescribed tags in order of appearance.
  const described = Object.keys(manifest.properties);
  const ordered = [...described, ...propertyOrder.filter((name) => !described.includes(name))];
  const properties = ordered.map((name): TemplateProperty => {
    const meta = manifest.properties[name];
    return meta === undefined ? { type: 'text', name } : { type: meta.type, name, ...withoutType(meta) };
  });
  return {
    id: manifest.id,
    name: manifest.name,
    description: manifest.description,
    createdDateTime: manifest.createdDateTime,
    active: manifest.active,
    properties,
    files,
  };
}

function withoutType(meta: TemplateManifest['properties'][string]): Omit<TemplateProperty, 'type' | 'name'> {
  const { type: _type, ...rest } = meta;
  return rest;
}

/** Loads every sub-folder of `dir` that holds a `manifest.yaml`, `manifest.yml` or `manifest.json`. */
export async function loadTemplatesDir(dir: string): Promise<StoredTemplate[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const templates: StoredTemplate[] = [];
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const folder = join(dir, entry.name);
    const names = await readdir(folder);
    const manifestName = ['manifest.yaml', 'manifest.yml', 'manifest.json'].find((n) => names.includes(n));
    if (manifestName === undefined) continue;
    const source = join(folder, manifestName);
    const manifest = parseManifest(parseYaml(await readFile(source, 'utf8')), source);
    const contents = new Map<string, Buffer>();
    for (const file of manifest.files)
      contents.set(file.filename, await readFile(join(folder, file.filename)));
    templates.push(buildTemplate(manifest, contents));
  }
  return templates;
}

const syntheticText = Buffer.from('{Title}\n\n{Body}\n', 'utf8');

/**
 * `count` synthetic active text templates for pagination tests: ids 20001.., one hour apart from
 * 2022-01-01T00:00:00Z, so all are older than the samples and the higher id is the newer.
 */
export function syntheticTemplates(count: number): StoredTemplate[] {
  const start = Date.parse('2022-01-01T00:00:00Z');
  return Array.from({ length: count }, (_, index) => {
    const id = String(20001 + index);
    return buildTemplate(
      parseManifest(
        {
          id,
          name: `Synthetic template ${index + 1}`,
          createdDateTime: new Date(start + index * 3_600_000).toISOString().replace('.000Z', 'Z'),
          files: [{ id: `${id}1`, filename: 'note.txt', required: ['Title'] }],
        },
        `synthetic template ${id}`,
      ),
      new Map([['note.txt', syntheticText]]),
    );
  });
}

/** Id of the large-file template that `syntheticFileBytes` adds. */
export const largeFileTemplateId = '9099';

/**
 * Template 9099 "Large file": one text file (90991, large-file.txt) whose generated files are padded to
 * `bytes` with deterministic filler, streamed without being held in memory.
 */
export function largeFileTemplate(bytes: number): StoredTemplate {
  return buildTemplate(
    parseManifest(
      {
        id: largeFileTemplateId,
        name: 'Large file',
        description: `Generated files are padded to ${bytes} bytes, for download benchmarks.`,
        createdDateTime: '2021-12-31T00:00:00Z',
        files: [{ id: '90991', filename: 'large-file.txt', padToBytes: bytes }],
      },
      'large-file template',
    ),
    new Map([['large-file.txt', syntheticText]]),
  );
}

/** Encodes a list position as an opaque skip token. */
export const encodeSkipToken = (offset: number): string =>
  Buffer.from(`skip:${offset}`).toString('base64url');

/** Decodes a skip token; undefined when it is not one the emulator issued. */
export function decodeSkipToken(token: string): number | undefined {
  const match = /^skip:(\d{1,9})$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  return match === null ? undefined : Number(match[1]);
}

const withoutUsed = ({ usedProperties: _used, ...file }: StoredTemplateFile['resource']): TemplateFile =>
  file;

/** A template as the list shows it: id, name, createdDateTime and files (without usedProperties). */
export const templateListItem = (t: StoredTemplate): Template => ({
  id: t.id,
  name: t.name,
  createdDateTime: t.createdDateTime,
  files: t.files.map((f) => withoutUsed(f.resource)),
});

/** A template as read singly: with description, properties and each file's usedProperties. */
export const templateResource = (t: StoredTemplate): Template => ({
  id: t.id,
  name: t.name,
  ...(t.description === undefined ? {} : { description: t.description }),
  createdDateTime: t.createdDateTime,
  files: t.files.map((f) => ({
    ...f.resource,
    usedProperties: f.resource.usedProperties.map((u) => ({ ...u })),
  })),
  properties: t.properties.map((p) => ({
    ...p,
    ...(p.allowedValues ? { allowedValues: [...p.allowedValues] } : {}),
  })),
});

/** The templates of the workspace: active ones listed newest first, inactive ones hidden. */
export class TemplateStore {
  private readonly active: StoredTemplate[];
  private readonly byId = new Map<string, StoredTemplate>();

  constructor(templates: readonly StoredTemplate[]) {
    for (const template of templates) {
      if (this.byId.has(template.id)) throw new Error(`duplicate template id ${template.id}`);
      this.byId.set(template.id, template);
    }
    this.active = templates
      .filter((t) => t.active)
      .sort(
        (a, b) =>
          Date.parse(b.createdDateTime) - Date.parse(a.createdDateTime) ||
          b.id.length - a.id.length ||
          b.id.localeCompare(a.id),
      );
  }

  /** Number of active templates. */
  get activeCount(): number {
    return this.active.length;
  }

  /** Active templates from `offset`, at most `size`, and whether more remain. */
  page(offset: number, size: number): { items: StoredTemplate[]; more: boolean } {
    return { items: this.active.slice(offset, offset + size), more: offset + size < this.active.length };
  }

  /** An active template by id (inactive ones are treated as unknown). */
  get(id: string): StoredTemplate | undefined {
    const template = this.byId.get(id);
    return template?.active ? template : undefined;
  }

  /** Every template, inactive included. */
  all(): StoredTemplate[] {
    return [...this.byId.values()];
  }
}
