/**
 * Writes the sample template files of the emulator (the .docx and .txt beside each manifest). The output is
 * byte-for-byte reproducible, so the committed binaries can be checked against this script.
 * Run: `npx tsx local/emulator/templates/build-samples.ts`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildDocx } from '../docx-package';

/** The sample files: path relative to the templates folder, and how to build its bytes. */
export const sampleFiles: ReadonlyArray<{ readonly path: string; readonly build: () => Buffer }> = [
  {
    path: 'invoice/invoice.docx',
    build: () =>
      buildDocx([
        'Invoice {Invoice Number}',
        'Billed to: {Customer Name}',
        'Amount due: {Amount} {Currency}',
        'Due date: {Due Date}',
        'Paid: {Paid}',
        'Thank you for your business.',
      ]),
  },
  {
    path: 'release-pack/release-notes.docx',
    build: () =>
      buildDocx([
        'Release notes {Release}',
        'Repository: {Repository}',
        'Channel: {Channel}',
        'Published on {Published} by {Author}',
      ]),
  },
  {
    path: 'release-pack/changelog.docx',
    build: () =>
      buildDocx(['Changelog of {Repository}', 'Version {Release} ({Channel})', 'Published: {Published}']),
  },
  { path: 'plain-note/note.txt', build: () => Buffer.from('{Title}\n\n{Body}\n', 'utf8') },
  {
    path: 'order-summary/order-summary.txt',
    build: () =>
      Buffer.from(
        [
          'Order {Order Id} for {Customer}',
          'Quantity: {Quantity} at {Unit Price}',
          'Gift wrap: {Gift Wrap}',
          'Ordered on: {Order Date} ({Priority})',
          'Ship to: {Ship To}',
          'Items: {Items}',
          'Lots: {Lot Numbers}',
          '',
        ].join('\n'),
        'utf8',
      ),
  },
  {
    path: 'invoice-2023/invoice-2023.docx',
    build: () => buildDocx(['Invoice for {Customer Name}', 'Total: {Amount}']),
  },
];

/** Writes every sample file under `dir`. */
export async function buildSamples(dir: string = __dirname): Promise<string[]> {
  const written: string[] = [];
  for (const file of sampleFiles) {
    const target = join(dir, file.path);
    await writeFile(target, file.build());
    written.push(target);
  }
  return written;
}

if (require.main === module) {
  buildSamples()
    .then((written) => process.stdout.write(`${written.map((p) => `wrote ${p}`).join('\n')}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`build-samples: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    });
}
