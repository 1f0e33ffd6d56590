/**
 * Finds the `{Property Name}` tags a template file uses, in order of first appearance. Word may split a tag
 * over several runs, so the text of each paragraph is joined before tags are looked for.
 */
import PizZip from 'pizzip';

// Loop and section tags ({#x}, {/x}, {^x}) and raw XML tags ({@x}) are structure, not properties.
const structural = /^[#/^@]/;
const tagPattern = /\{([^{}]+)\}/g;

/** Tags in a plain text, trimmed, deduplicated, in order of first appearance. */
export function tagsInText(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.matchAll(tagPattern)) {
    const tag = (match[1] ?? '').trim();
    if (tag !== '' && !structural.test(tag)) seen.add(tag);
  }
  return [...seen];
}

/** The text of each paragraph of a WordprocessingML part, runs joined, XML entities decoded. */
export function paragraphTexts(xml: string): string[] {
  const paragraphs: string[] = [];
  for (const paragraph of xml.matchAll(/<w:p\b[^>]*?(?:\/>|>([\s\S]*?)<\/w:p>)/g)) {
    const body = paragraph[1] ?? '';
    let text = '';
    for (const run of body.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)) text += decodeXml(run[1] ?? '');
    paragraphs.push(text);
  }
  return paragraphs;
}

/** Tags used by a .docx file: its body, headers and footers. */
export function tagsInDocx(content: Buffer): string[] {
  const zip = new PizZip(content);
  const parts = Object.keys(zip.files)
    .filter((name) => /^word\/(document|header\d*|footer\d*)\.xml$/.test(name))
    // The body first, so properties come in reading order.
    .sort(
      (a, b) => Number(b === 'word/document.xml') - Number(a === 'word/document.xml') || a.localeCompare(b),
    );
  const seen = new Set<string>();
  for (const part of parts) {
    const xml = zip.file(part)?.asText() ?? '';
    for (const tag of tagsInText(paragraphTexts(xml).join('\n'))) seen.add(tag);
  }
  return [...seen];
}

function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, entity: string) => {
    switch (entity) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default:
        return String.fromCodePoint(
          entity.startsWith('#x') ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1)),
        );
    }
  });
}
