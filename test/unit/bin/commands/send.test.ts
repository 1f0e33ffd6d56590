import { contentTypeOf } from '../../../../bin/commands/send';

describe('docrelay send', () => {
  it.each([
    ['order.json', 'application/json'],
    ['envelope.XML', 'application/xml'],
    ['note.txt', 'text/plain'],
    ['sms.form', 'application/x-www-form-urlencoded'],
    ['payload', 'application/json'],
    ['dir.v2/payload', 'application/json'],
  ])('posts %s as %s', (file, type) => {
    expect(contentTypeOf(file)).toBe(type);
  });
});
