/**
 * One endpoint: its fields, enabled modules, licenses, recent commands, software inventory and
 * the network hosts of its organization; and the actions on it. Writes carry the version read:
 * a 409 asks the analyst to reload, it never overwrites.
 */
import { useEffect, useState } from 'preact/hooks';
import { Panel } from '../components/panel';
import { CommandsPanel } from './endpoint-commands';
import { Message } from '../components/message';
import { describeError, isStale } from '../services/client';
import { getEndpoint, type AnyEndpoint } from '../services/endpoints';
import { countOwnedLicenses, getLicense, setLicenseState, type License, type LicenseState } from '../services/licenses';
import { getEndpointModules, MODULES, setEndpointModule, type EnabledModules, type ModuleName, type ModuleState } from '../services/modules';
import { networkHosts, type NetworkHostPage } from '../services/network';
import { endpointSoftware, type EndpointSoftwarePage } from '../services/software';
import { itemsOf, totalOf } from '../services/types';
import { AgentChannelPanel } from './agent-channel-panel';

/** The endpoint's scalar fields (and hostInfo's) as label/value text pairs. */
function fieldsOf(e: AnyEndpoint): [string, string][] {
  const out: [string, string][] = [];
  const add = (prefix: string, o: object) => {
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined || v === null) continue;
      if (typeof v === 'object' && !Array.isArray(v)) add(`${prefix}${k}.`, v as object);
      else out.push([`${prefix}${k}`, Array.isArray(v) ? v.join(', ') : String(v)]);
    }
  };
  add('', e);
  return out;
}

function ModulesPanel(props: { endpointId: string; orgId: string; canWrite: boolean }) {
  const [modules, setModules] = useState<EnabledModules | undefined | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [stale, setStale] = useState(false);
  const load = () => getEndpointModules(props.endpointId).then((m) => (setModules(m), setStale(false), setError(undefined)), (e: unknown) => setError(describeError(e)));
  useEffect(() => void load(), [props.endpointId]);
  const change = async (m: ModuleName, state: ModuleState) => {
    setError(undefined);
    setNotice(undefined);
    try {
      setModules(await setEndpointModule(props.endpointId, props.orgId, modules ?? undefined, m, state));
      setNotice(`${m} is now ${state}.`);
    } catch (e) {
      setStale(isStale(e));
      setError(isStale(e) ? 'Someone changed these modules since you loaded them (409): reload to see their state, then try again.' : describeError(e));
    }
  };
  const stateOf = (m: ModuleName): string => (modules ? ((modules as Partial<Record<ModuleName, ModuleState>>)[m] ?? 'not set') : 'not set');
  return (
    <Panel id="modules" title="Enabled modules">
      <Message kind="error" text={error} testId="modules-error" />
      {stale && (
        <button type="button" id="modules-reload" onClick={() => void load()}>
          Reload modules
        </button>
      )}
      <Message kind="notice" text={notice} />
      {modules === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          {modules === undefined && <p>No modules have been set for this endpoint.</p>}
          <table class="data compact">
            <thead>
              <tr>
                <th scope="col">Module</th>
                <th scope="col">State</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {MODULES.map((m) => (
                <tr key={m} data-module={m} data-state={stateOf(m)}>
                  <td>{m}</td>
                  <td>{stateOf(m)}</td>
                  <td>
                    {props.canWrite &&
                      (stateOf(m) === 'ACTIVE' || stateOf(m) === 'PENDING' ? (
                        <button type="button" onClick={() => void change(m, 'INACTIVE')}>
                          Disable {m}
                        </button>
                      ) : (
                        <button type="button" onClick={() => void change(m, 'ACTIVE')}>
                          Enable {m}
                        </button>
                      ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Panel>
  );
}

function LicensesPanel(props: { endpointId: string; canWrite: boolean }) {
  const [owned, setOwned] = useState<number | undefined>();
  const [licenseId, setLicenseId] = useState('');
  const [license, setLicense] = useState<License | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  useEffect(() => void countOwnedLicenses(props.endpointId).then(setOwned, (e: unknown) => setError(describeError(e))), [props.endpointId]);
  const move = async (state: LicenseState) => {
    if (!license) return;
    setError(undefined);
    setNotice(undefined);
    try {
      setLicense(await setLicenseState(license.id, state));
      setNotice(`License ${license.id} is now ${state}.`);
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <Panel id="licenses" title="Licenses">
      <p>
        Licenses owned by this endpoint: <strong data-owned-licenses={owned === undefined ? '' : String(owned)}>{owned ?? '…'}</strong>
      </p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setError(undefined);
          setNotice(undefined);
          getLicense(licenseId.trim()).then(setLicense, (err: unknown) => (setLicense(undefined), setError(describeError(err))));
        }}
      >
        <label for="license-id">License id</label>
        <input id="license-id" value={licenseId} onInput={(e) => setLicenseId((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Look up</button>
      </form>
      <Message kind="error" text={error} testId="license-error" />
      <Message kind="notice" text={notice} />
      {license && (
        <div data-license={license.id} data-license-state={license.state}>
          <p>
            {license.id}: {license.type}, <strong>{license.state}</strong>, owner {license.ownerId ?? '—'}
          </p>
          {props.canWrite && (
            <p>
              <button type="button" onClick={() => void move('ACTIVATED')}>
                Activate
              </button>{' '}
              <button type="button" onClick={() => void move('DEACTIVATED')}>
                Deactivate
              </button>
            </p>
          )}
        </div>
      )}
    </Panel>
  );
}

function SoftwarePanel(props: { endpointId: string }) {
  const [page, setPage] = useState(0);
  const [data, setData] = useState<EndpointSoftwarePage | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void endpointSoftware(props.endpointId, page).then(setData, (e: unknown) => setError(describeError(e))), [props.endpointId, page]);
  const pages = data ? Math.max(1, Math.ceil(totalOf(data) / 10)) : 1;
  return (
    <Panel id="software-inventory" title="Software inventory">
      <Message kind="error" text={error} />
      <table class="data compact">
        <caption>Installed software {data ? `(${totalOf(data)} titles)` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Version</th>
            <th scope="col">Vendor</th>
          </tr>
        </thead>
        <tbody>
          {data &&
            itemsOf(data).map((s) => (
              <tr key={s.id}>
                <td>{s.name}</td>
                <td>{s.version}</td>
                <td>{s.vendor ?? ''}</td>
              </tr>
            ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="Software pages">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page + 1} of {pages}
        </span>
        <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </Panel>
  );
}

function NetworkPanel(props: { orgId: string }) {
  const [data, setData] = useState<NetworkHostPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void networkHosts(props.orgId).then(setData, (e: unknown) => setError(describeError(e))), [props.orgId]);
  if (data && totalOf(data) === 0) return null;
  return (
    <Panel id="network-hosts" title="Network hosts of the organization">
      <Message kind="error" text={error} />
      <table class="data compact">
        <caption>Most recently seen {data ? `(${totalOf(data)} in total)` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">IP</th>
            <th scope="col">MAC</th>
            <th scope="col">Status</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {data &&
            itemsOf(data).map((h) => (
              <tr key={h.id}>
                <td>{h.ipAddress ?? ''}</td>
                <td>{h.macAddress ?? ''}</td>
                <td>{h.status ?? ''}</td>
                <td>{h.lastSeen ? new Date(h.lastSeen).toLocaleString('en-GB') : ''}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </Panel>
  );
}

export function EndpointDetailPage(props: { id: string; canWriteIn: (orgId: string) => boolean }) {
  const [endpoint, setEndpoint] = useState<AnyEndpoint | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setEndpoint(undefined);
    setError(undefined);
    getEndpoint(props.id).then(setEndpoint, (e: unknown) => setError(describeError(e)));
  }, [props.id]);
  const title = endpoint ? String(endpoint.displayName ?? endpoint.id) : props.id;
  return (
    <section id="endpoint-detail" aria-labelledby="endpoint-title">
      <p>
        <a href="#/endpoints/agents">← Endpoints</a>
      </p>
      <h2 id="endpoint-title" tabIndex={-1} data-endpoint-name={endpoint ? title : ''}>
        {title}
      </h2>
      <Message kind="error" text={error} testId="endpoint-error" />
      {endpoint && (
        <>
          <Panel id="fields" title="Fields">
            <dl class="fields">
              {fieldsOf(endpoint).map(([k, v]) => (
                <div key={k} data-field={k}>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
            </dl>
          </Panel>
          {endpoint.type === 'VC_ENDPOINT' && <AgentChannelPanel endpointId={props.id} />}
          <ModulesPanel endpointId={props.id} orgId={String(endpoint.orgId)} canWrite={props.canWriteIn(String(endpoint.orgId))} />
          <LicensesPanel endpointId={props.id} canWrite={props.canWriteIn(String(endpoint.orgId))} />
          <CommandsPanel endpointId={props.id} canWrite={props.canWriteIn(String(endpoint.orgId))} />
          {endpoint.type === 'VC_ENDPOINT' && <SoftwarePanel endpointId={props.id} />}
          <NetworkPanel orgId={String(endpoint.orgId)} />
        </>
      )}
    </section>
  );
}
