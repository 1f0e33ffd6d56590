/**
 * Renders a template file with docxtemplater's free core: .docx through Docxtemplater, text files through
 * its TxtTemplater, both with `{Property Name}` tags and an empty string for a property without a value.
 */
import Docxtemplater from 'docxtemplater';
import TxtTemplater from 'docxtemplater/js/text.js';
import PizZip from 'pizzip';
import type { StoredTemplateFile } from './template-store';

const delimiters = { start: '{', end: '}' };
const nullGetter = (): string => '';

/** Renders `file` with `values` (property name to text); returns the generated file's bytes. */
export function renderTemplateFile(
  file: StoredTemplateFile,
  values: Readonly<Record<string, string>>,
): Buffer {
  if (file.kind === 'text') {
    const templater = new TxtTemplater(file.content.toString('utf8'), { delimiters, nullGetter });
    return Buffer.from(templater.render(values), 'utf8');
  }
  const doc = new Docxtemplater(new PizZip(file.content), {
    paragraphLoop: true,
    linebreaks: true,
    delimiters,
    nullGetter,
  });
  doc.render(values);
  return doc.getZip().generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}
