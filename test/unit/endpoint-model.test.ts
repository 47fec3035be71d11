import { expect } from 'chai';
import { carrierWan, endpointKeys, isScannerSubject, lookupKey, macKeyDigits } from '../../src/resources/endpoints/model.js';
import { endpointCriteriaQuery, utmCriteriaQuery } from '../../src/resources/endpoints/criteria.js';

describe('endpoint model rules', () => {
  it('wanStatus follows the WAN that carries traffic (WAN1 primary, unknown counts as up)', () => {
    expect(carrierWan({}, undefined)).to.equal('WAN1');
    expect(carrierWan({ WAN1: 'INACTIVE' }, 'WAN1')).to.equal('WAN2');
    expect(carrierWan({ WAN1: 'INACTIVE', WAN2: 'ACTIVE' }, 'WAN1')).to.equal('WAN2');
    expect(carrierWan({ WAN1: 'ACTIVE', WAN2: 'ACTIVE' }, 'WAN2')).to.equal('WAN1');
    expect(carrierWan({ WAN2: 'ACTIVE' }, 'WAN2')).to.equal('WAN1');
    expect(carrierWan({ WAN1: 'INACTIVE', WAN2: 'INACTIVE' }, 'WAN2')).to.equal('WAN2');
    expect(carrierWan({ WAN1: 'INACTIVE', WAN2: 'INACTIVE' }, 'WAN1')).to.equal('WAN1');
  });

  it('MACs compare by hex digits, common names by lower case, serials exactly', () => {
    expect(macKeyDigits('00:18:0A:aa-BB.cc')).to.equal('00180aaabbcc');
    expect(lookupKey('utm-mac', 'AA-BB-CC-00-11-22')).to.equal(lookupKey('utm-mac', 'aabb.cc00.1122'));
    expect(lookupKey('utm-common-name', 'FW.Example.com')).to.equal(lookupKey('utm-common-name', 'fw.example.COM'));
    expect(lookupKey('utm-serial', 'Q2AB')).to.not.equal(lookupKey('utm-serial', 'q2ab'));
  });

  it('unique keys by family; none for deleted records or LTEs without a site', () => {
    expect(endpointKeys({ type: 'EXTERNAL_UTM', serialId: 'S1', lastMacAddress: 'AA:BB', commonName: 'Fw' })).to.deep.equal([
      'utm-serial:S1',
      'utm-mac:aabb',
      'utm-common-name:fw',
    ]);
    expect(endpointKeys({ type: 'VC_UTM', serialId: 'S1', deleted: true })).to.deep.equal([]);
    expect(endpointKeys({ type: 'VC_LTE', imei: '35', site: { id: 'hq' } })).to.deep.equal(['lte-imei-site:["35","hq"]']);
    expect(endpointKeys({ type: 'VC_LTE', imei: 'a|b', site: { id: 'c' } })).to.not.deep.equal(endpointKeys({ type: 'VC_LTE', imei: 'a', site: { id: 'b|c' } }));
    expect(endpointKeys({ type: 'VC_LTE', imei: '35' })).to.deep.equal([]);
    expect(endpointKeys({ type: 'VC_ENDPOINT', serialId: 'S1' })).to.deep.equal([]);
  });

  it('a scanner is named by OU=scanner in the certificate subject', () => {
    expect(isScannerSubject('CN=scan-1, OU=Scanner, O=Acme')).to.equal(true);
    expect(isScannerSubject('/CN=scan-1/OU=scanner/O=Acme')).to.equal(true);
    expect(isScannerSubject('CN=scanner-1, OU=Agents')).to.equal(false);
    expect(isScannerSubject(undefined)).to.equal(false);
  });

  it('criteria always keep the family, the live records and the caller’s scope', () => {
    const q = utmCriteriaQuery({ connectionStatuses: [], siteKey: 'k' }, { term: { orgPath: 'o1' } });
    expect(q).to.deep.equal({
      bool: {
        filter: [{ terms: { type: ['EXTERNAL_UTM', 'VC_UTM'] } }, { term: { orgPath: 'o1' } }, { term: { 'site.id': 'k' } }],
        must_not: [{ term: { deleted: true } }],
      },
    });
    const now = Date.parse('2025-01-31T00:00:00Z');
    const e = endpointCriteriaQuery({ showInactiveEndpoints: false, includeScannerEndpoints: false }, undefined, now);
    expect(JSON.stringify(e)).to.contain('"gte":"2025-01-01T00:00:00.000Z"').and.contain('"scanner":true');
  });
});
