import PizZip from 'pizzip';
import { buildDocx } from '../../../../local/emulator/docx-package';
import { paragraphTexts, tagsInDocx, tagsInText } from '../../../../local/emulator/tag-scanner';

const w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';

describe('tag scanner', () => {
  it('finds tags with spaces in order of first appearance, once each', () => {
    expect(tagsInText('{Title}\n{Customer Name} and {Title} then { Due Date }')).toEqual([
      'Title',
      'Customer Name',
      'Due Date',
    ]);
  });

  it('ignores loop, section and raw tags', () => {
    expect(tagsInText('{#items}{Name}{/items}{^empty}x{/empty}{@raw}')).toEqual(['Name']);
  });

  it('joins the runs of a paragraph, so a tag Word split over runs is found', () => {
    const xml = `<w:document ${w}><w:body><w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Hello {Cus</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">tomer </w:t></w:r><w:r><w:tab/><w:t>Name}</w:t></w:r></w:p><w:p/></w:body></w:document>`;
    expect(paragraphTexts(xml)).toEqual(['Hello {Customer Name}', '']);
  });

  it('decodes XML entities in run text', () => {
    const xml = `<w:p><w:r><w:t>{A &amp; B} &lt;x&gt;</w:t></w:r></w:p>`;
    expect(tagsInText(paragraphTexts(xml).join('\n'))).toEqual(['A & B']);
  });

  it('reads the body, headers and footers of a .docx', () => {
    const zip = new PizZip(buildDocx(['Invoice {Invoice Number}', 'For {Customer Name}']));
    zip.file('word/footer1.xml', `<w:ftr ${w}><w:p><w:r><w:t>Page of {Company}</w:t></w:r></w:p></w:ftr>`);
    const docx = zip.generate({ type: 'nodebuffer' });
    expect(tagsInDocx(docx)).toEqual(['Invoice Number', 'Customer Name', 'Company']);
  });
});
