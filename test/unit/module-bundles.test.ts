import { expect } from 'chai';
import {
  confirmPending,
  orgSummary,
  withBundleSubscribed,
  withBundleUnsubscribed,
} from '../../src/resources/modules/service.js';
import type { Bundle } from '../../src/resources/bundles/model.js';

const bundle = (id: string, modules: Bundle['modules']): Bundle => ({ id, name: id, description: '', modules });

describe('module status arithmetic', () => {
  it('subscribing makes the bundle modules PENDING unless ACTIVE, leaving the others', () => {
    expect(withBundleSubscribed({ fim: 'ACTIVE', wel: 'INACTIVE', mdr: 'ACTIVE' }, ['fim', 'wel', 'pan'])).to.deep.equal({
      fim: 'ACTIVE',
      wel: 'PENDING',
      pan: 'PENDING',
      mdr: 'ACTIVE',
    });
  });

  it('unsubscribing makes the bundle modules INACTIVE unless a still-subscribed bundle includes them', () => {
    const fields = { fim: 'ACTIVE', wel: 'ACTIVE', pan: 'PENDING', mdr: 'ACTIVE' } as const;
    expect(withBundleUnsubscribed(fields, ['fim', 'wel', 'pan'], [bundle('b', ['wel']), bundle('c', ['pan', 'cmd'])])).to.deep.equal({
      fim: 'INACTIVE',
      wel: 'ACTIVE',
      pan: 'PENDING',
      mdr: 'ACTIVE',
    });
    expect(withBundleUnsubscribed(fields, ['fim'], [])).to.deep.equal({ ...fields, fim: 'INACTIVE' });
  });

  it('install confirmation turns PENDING into ACTIVE and says when nothing was pending', () => {
    expect(confirmPending({ fim: 'PENDING', wel: 'INACTIVE', pan: 'ACTIVE' })).to.deep.equal({ fim: 'ACTIVE', wel: 'INACTIVE', pan: 'ACTIVE' });
    expect(confirmPending({ wel: 'INACTIVE', pan: 'ACTIVE' })).to.equal(undefined);
  });

  it('the organization summary is true only for ACTIVE antivirus, fim, pan and wel', () => {
    expect(orgSummary(undefined)).to.deep.equal({ avEnabled: false, fimEnabled: false, panEnabled: false, windowsEventLogEnabled: false });
    expect(orgSummary({ antivirus: 'ACTIVE', fim: 'PENDING', pan: 'INACTIVE', wel: 'ACTIVE', mdr: 'ACTIVE' })).to.deep.equal({
      avEnabled: true,
      fimEnabled: false,
      panEnabled: false,
      windowsEventLogEnabled: true,
    });
  });
});
