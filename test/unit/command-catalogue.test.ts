import { expect } from 'chai';
import {
  catalogueOsOf,
  commandsFor,
  loadCatalogue,
  parseCatalogue,
} from '../../src/resources/commands/catalogue.js';

describe('command catalogue', () => {
  it('the repository catalogue loads, is versioned and has unique names', () => {
    const c = loadCatalogue();
    expect(c.version).to.be.a('number').and.at.least(1);
    const names = c.commands.map((e) => e.name);
    expect(new Set(names).size).to.equal(names.length);
    expect(names).to.include.members(['ping', 'ipconfig', 'ifconfig']);
  });

  it('filters by operating system, in catalogue order', () => {
    const c = parseCatalogue({
      version: 3,
      commands: [
        { name: 'a', os: ['linux', 'mac', 'windows'] },
        { name: 'w', os: ['windows'] },
        { name: 'l', os: ['linux'] },
        { name: 'm', os: ['mac', 'linux'] },
      ],
    });
    expect(commandsFor(c, 'windows')).to.deep.equal(['a', 'w']);
    expect(commandsFor(c, 'linux')).to.deep.equal(['a', 'l', 'm']);
    expect(commandsFor(c, 'mac')).to.deep.equal(['a', 'm']);
    expect(commandsFor(c, undefined)).to.deep.equal([]);
  });

  it('refuses a malformed catalogue: unknown OS, duplicate name, missing version', () => {
    expect(() => parseCatalogue({ version: 1, commands: [{ name: 'a', os: ['beos'] }] })).to.throw(/command catalogue/);
    expect(() =>
      parseCatalogue({ version: 1, commands: [{ name: 'a', os: ['linux'] }, { name: 'a', os: ['mac'] }] }),
    ).to.throw(/command catalogue/);
    expect(() => parseCatalogue({ commands: [] })).to.throw(/version/);
  });

  it('derives the OS from hostInfo.os, then platformFamily, then platform', () => {
    expect(catalogueOsOf({ os: 'windows' })).to.equal('windows');
    expect(catalogueOsOf({ os: 'Windows' })).to.equal('windows');
    expect(catalogueOsOf({ os: 'darwin' })).to.equal('mac');
    expect(catalogueOsOf({ os: 'linux', platform: 'ubuntu' })).to.equal('linux');
    expect(catalogueOsOf({ platformFamily: 'debian' })).to.equal('linux');
    expect(catalogueOsOf({ platform: 'Microsoft Windows Server 2022' })).to.equal('windows');
    expect(catalogueOsOf({ os: 'plan9' })).to.equal(undefined);
    expect(catalogueOsOf(undefined)).to.equal(undefined);
  });
});
