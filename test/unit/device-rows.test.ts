import { expect } from 'chai';
import { FAMILY_TABLES, copyLine } from '../../src/migration/device-rows.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';

describe('device rows: COPY lines PostgreSQL accepts', () => {
  it('U+0000, which PostgreSQL text and jsonb cannot hold, becomes U+FFFD in text, arrays and JSON (found by fuzzing)', () => {
    const doc = {
      id: 'u-1',
      orgId: 'org-1',
      type: 'EXTERNAL_UTM',
      displayName: 'fire\u0000wall',
      internalIps: ['10.0.0.1\u0000'],
      hostInfo: { hostName: 'h\u0000st' },
      site: { id: 's\u00001', displayName: 'depot' },
      deleted: false,
    } as unknown as EndpointDoc;
    const line = copyLine(FAMILY_TABLES.utm, doc, 3);
    expect(line).to.not.contain('\u0000');
    expect(line).to.not.contain('\\u0000');
    expect(line).to.contain('fire\uFFFDwall');
    expect(line).to.contain('"hostName":"h\uFFFDst"');
    expect(line).to.contain('{"10.0.0.1\uFFFD"}');
    expect(line.endsWith('\t3\n')).to.equal(true);
  });
});
