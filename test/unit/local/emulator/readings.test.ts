import { defaultReadings, mergeReadings } from '../../../../local/emulator/readings';

describe('service readings', () => {
  it('default to the page example: 201, @api.downloadUrl, "Request entity too large"', () => {
    expect(defaultReadings).toEqual({
      createStatus: 201,
      linkField: '@api.downloadUrl',
      payloadTooLargeMessage: 'Request entity too large',
    });
  });

  it('switch each reading to the other documented one, keeping the rest', () => {
    const next = mergeReadings(defaultReadings, { createStatus: 200, linkField: '@api.downloadURL' });
    expect(next).toEqual({
      createStatus: 200,
      linkField: '@api.downloadURL',
      payloadTooLargeMessage: 'Request entity too large',
    });
    expect(mergeReadings(next, { payloadTooLargeMessage: 'Payload too large' }).payloadTooLargeMessage).toBe(
      'Payload too large',
    );
  });

  it.each([
    { createStatus: 202 },
    { linkField: '@api.downloadurl' },
    { payloadTooLargeMessage: 'Too big' },
    { other: true },
  ])('refuses %j, which no reading of the page allows', (patch) => {
    expect(() => mergeReadings(defaultReadings, patch)).toThrow(/invalid readings/);
  });
});
