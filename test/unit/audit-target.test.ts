/**
 * The audit trail's target derivation over the real route table: every audited
 * write names a kind of record, and one naming a record in its path gets that record's id.
 */
import { expect } from 'chai';
import { allRoutes } from '../../src/container.js';
import { offlineServices } from '../helpers/offline-services.js';
import { deriveTarget, isAuditedWrite } from '../../src/http/audit.js';
import { paramKey } from '../../src/http/routes.js';

describe('audit target derivation', () => {
  // Nothing is sent to the store: the services are built only for their route declarations.
  const { services, close } = offlineServices();
  const routes = allRoutes(services);
  after(close);

  const KNOWN_TYPES = new Set([
    'endpoint',
    'utm-endpoint',
    'lte-endpoint',
    'client-version',
    'org',
    'organization',
    'token',
    'bundle',
    'license',
    'org-license-contract',
    'command',
    'csi',
    'network-host',
    'config',
    'device-migration',
    'job',
    'rollout',
  ]);

  it('every audited write has a known target type, and the id of the record its path names', () => {
    const writes = routes.filter(isAuditedWrite);
    expect(writes.length).to.be.greaterThan(35);
    const problems: string[] = [];
    for (const r of writes) {
      const names = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const params = Object.fromEntries(names.map((n) => [paramKey(n), `value-of-${n}`]));
      const t = deriveTarget(r, params, undefined, undefined);
      if (!KNOWN_TYPES.has(t.type)) problems.push(`${r.operationId} ${r.path}: type ${t.type}`);
      if (names.length > 0 && t.id !== `value-of-${names[0]}`) problems.push(`${r.operationId} ${r.path}: id ${t.id}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('a create names the record it answered; an organization-scoped path names the organization', () => {
    const byId = new Map(routes.map((r) => [r.operationId, r]));
    const create = byId.get('createEndpoint');
    const orgConfig = byId.get('putOrgTargetVersion');
    expect(create && deriveTarget(create, {}, { orgId: 'o-body' }, { id: 'e-1', orgId: 'o-1' })).to.deep.equal({
      type: 'endpoint',
      id: 'e-1',
      namedOrg: 'o-1',
    });
    expect(orgConfig && deriveTarget(orgConfig, { orgId: 'o-2' }, undefined, undefined)).to.deep.equal({
      type: 'org',
      id: 'o-2',
      namedOrg: 'o-2',
    });
  });

  it('agent telemetry is not audited as writes; the device migration (a GET that writes) is', () => {
    const audited = new Set(routes.filter(isAuditedWrite).map((r) => r.operationId));
    for (const op of [
      'connectEndpoint',
      'disconnectEndpoint',
      'replaceEndpointSoftwareInventory',
      'recordNetworkHeartbeat',
      'searchEndpoints',
      'searchAuditEvents',
    ]) {
      expect(audited.has(op), op).to.equal(false);
    }
    for (const op of ['migrateUtmDevices', 'replaceEndpointEnabledModules', 'revokeToken', 'deleteEndpoint'])
      expect(audited.has(op), op).to.equal(true);
  });
});
