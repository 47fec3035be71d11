/** Endpoints of the scope: agents, UTM and LTE tables, server-side search, sort and paging. */
import { useEffect, useState } from 'preact/hooks';
import { DataTable, type Column, type Sort } from '../components/data-table';
import { ExportButtons } from '../components/export-buttons';
import { Message } from '../components/message';
import { StatusBadge } from '../components/status-badge';
import { setAgentCriteria } from '../services/jobs';
import { describeError } from '../services/client';
import {
  agentCriteria,
  agentSearchBody,
  CONNECTION_STATUSES,
  lteSearchBody,
  searchAgents,
  utmSearchBody,
  searchLte,
  searchUtm,
  type AgentPage,
  type AgentSortField,
  type ConnectionStatus,
  type LtePage,
  type LteSortField,
  type UtmPage,
  type UtmSortField,
} from '../services/endpoints';
import type { Scope } from '../services/scope';
import { itemsOf, totalOf } from '../services/types';

export type Family = 'agents' | 'utm' | 'lte';
const PAGE_SIZE = 20;

type AgentRow = NonNullable<AgentPage['items']>[number];
type UtmRow = NonNullable<UtmPage['items']>[number];
type LteRow = NonNullable<LtePage['items']>[number];

function openLink(id: string, label: string | undefined) {
  return (
    <a href={`#/endpoint/${encodeURIComponent(id)}`} data-open={id}>
      {label || id}
    </a>
  );
}

const when = (s: string | undefined) => (s ? new Date(s).toLocaleString('en-GB') : '');

const agentColumns: Column<AgentRow, AgentSortField>[] = [
  { label: 'Name', sortField: 'displayName', render: (r) => openLink(r.id ?? '', r.displayName) },
  { label: 'Host', sortField: 'hostInfo.hostName', render: (r) => r.hostInfo?.hostName ?? '' },
  { label: 'OS', render: (r) => r.hostInfo?.os ?? '' },
  { label: 'Organization', sortField: 'orgId', render: (r) => r.orgId ?? '' },
  { label: 'Status', sortField: 'connectionStatus', render: (r) => <StatusBadge status={r.connectionStatus} /> },
  { label: 'Last connect', sortField: 'lastConnect', render: (r) => when(r.lastConnect) },
  { label: 'Last seen', render: (r) => when(r.lastSeen) },
  { label: 'Version', sortField: 'clientVersion', render: (r) => r.clientVersion ?? '' },
];

const utmColumns: Column<UtmRow, UtmSortField>[] = [
  { label: 'Name', sortField: 'displayName', render: (r) => openLink(r.id ?? '', r.displayName || r.serialId) },
  { label: 'Serial', sortField: 'serialId', render: (r) => r.serialId ?? '' },
  { label: 'Model', sortField: 'model', render: (r) => r.model ?? '' },
  { label: 'Organization', sortField: 'orgId', render: (r) => r.orgId ?? '' },
  { label: 'Status', sortField: 'connectionStatus', render: (r) => <StatusBadge status={r.connectionStatus} /> },
  { label: 'Last connect', sortField: 'lastConnect', render: (r) => when(r.lastConnect) },
  { label: 'Last seen', render: (r) => when(r.lastSeen) },
];

const lteColumns: Column<LteRow, LteSortField>[] = [
  { label: 'Name', sortField: 'displayName', render: (r) => openLink(r.id ?? '', r.displayName || r.imei) },
  { label: 'IMEI', sortField: 'imei', render: (r) => r.imei ?? '' },
  { label: 'Model', sortField: 'model', render: (r) => r.model ?? '' },
  { label: 'Organization', sortField: 'orgId', render: (r) => r.orgId ?? '' },
  { label: 'Status', sortField: 'connectionStatus', render: (r) => <StatusBadge status={r.connectionStatus} /> },
  { label: 'Data usage', sortField: 'dataUsage', render: (r) => (r.dataUsage ?? 0).toLocaleString('en-US') },
  { label: 'Last seen', render: (r) => when(r.lastSeen) },
];

/** The connection-status filter (POTENTIALLY_DISCONNECTED: connected but not seen within the presence timeout). */
function StatusSelect(props: { id: string; value: ConnectionStatus | ''; onChange(v: ConnectionStatus | ''): void }) {
  return (
    <>
      <label for={props.id}>Connection status</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value as ConnectionStatus | '')}>
        <option value="">any</option>
        {CONNECTION_STATUSES.map((s) => (
          <option key={s} value={s}>
            {s === 'POTENTIALLY_DISCONNECTED' ? 'POTENTIALLY_DISCONNECTED (not seen lately)' : s}
          </option>
        ))}
      </select>
    </>
  );
}

/** One page of a family, re-asked whenever scope, filter, sort or page change. */
function usePage<P>(load: () => Promise<P>, deps: unknown[]): { page: P | undefined; error: string | undefined } {
  const [page, setPage] = useState<P | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    setPage(undefined);
    setError(undefined);
    load().then(
      (p) => live && setPage(p),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, deps);
  return { page, error };
}

function AgentsTable(props: { scope: Scope; canWrite: boolean }) {
  const [text, setText] = useState('');
  const [basic, setBasic] = useState('');
  const [showInactive, setShowInactive] = useState(true);
  const [days, setDays] = useState(30);
  const [status, setStatus] = useState<ConnectionStatus | ''>('');
  const [sort, setSort] = useState<Sort<AgentSortField> | undefined>({ field: 'displayName', direction: 'ASC' });
  const [pageNo, setPageNo] = useState(0);
  const filter = { basic, showInactive, hideInactiveAfterDays: days, statuses: status ? [status] : [] };
  const { page, error } = usePage(
    () => searchAgents(props.scope, filter, { page: pageNo, size: PAGE_SIZE, sort }),
    [props.scope.orgId, props.scope.includeChildren, basic, showInactive, days, status, sort?.field, sort?.direction, pageNo],
  );
  return (
    <div>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setPageNo(0);
          setBasic(text.trim());
        }}
      >
        <label for="agent-search">Search (name, host, IP, version)</label>
        <input id="agent-search" type="search" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
        <label class="check">
          <input type="checkbox" id="agent-inactive" checked={!showInactive} onChange={(e) => (setPageNo(0), setShowInactive(!(e.currentTarget as HTMLInputElement).checked))} />
          hide inactive after
        </label>
        <label for="agent-days" class="visually-hidden">
          days
        </label>
        <input id="agent-days" type="number" min={0} max={36500} value={days} onChange={(e) => setDays(Number((e.currentTarget as HTMLInputElement).value))} />
        <span>days</span>
        <StatusSelect id="agent-status" value={status} onChange={(v) => (setPageNo(0), setStatus(v))} />
        <button type="submit">Search</button>
      </form>
      <div class="table-actions">
        <ExportButtons id="agents" search={() => ({ family: 'agents', body: agentSearchBody(props.scope, filter, { page: 0, size: PAGE_SIZE, sort }) })} />
        {props.canWrite && (
          <a href="#/jobs" class="button-link" data-create-job onClick={() => setAgentCriteria(agentCriteria(props.scope, filter))}>
            Bulk action on these agents…
          </a>
        )}
      </div>
      <Message kind="error" text={error} />
      <DataTable
        id="agents"
        caption="Agents"
        columns={agentColumns}
        rows={page && itemsOf(page)}
        rowKey={(r) => r.id ?? ''}
        totalCount={page && totalOf(page)}
        page={pageNo}
        size={PAGE_SIZE}
        sort={sort}
        onSort={(s) => (setPageNo(0), setSort(s))}
        onPage={setPageNo}
      />
    </div>
  );
}

function UtmTable(props: { scope: Scope }) {
  const [status, setStatus] = useState<ConnectionStatus | ''>('');
  const [sort, setSort] = useState<Sort<UtmSortField> | undefined>({ field: 'displayName', direction: 'ASC' });
  const [pageNo, setPageNo] = useState(0);
  const { page, error } = usePage(
    () => searchUtm(props.scope, status ? [status] : [], { page: pageNo, size: PAGE_SIZE, sort }),
    [props.scope.orgId, props.scope.includeChildren, status, sort?.field, sort?.direction, pageNo],
  );
  return (
    <div>
      <div class="filters">
        <StatusSelect id="utm-status" value={status} onChange={(v) => (setPageNo(0), setStatus(v))} />
      </div>
      <div class="table-actions">
        <ExportButtons id="utm" search={() => ({ family: 'utm', body: utmSearchBody(props.scope, status ? [status] : [], { page: 0, size: PAGE_SIZE, sort }) })} />
      </div>
      <Message kind="error" text={error} />
      <DataTable
        id="utm"
        caption="UTM endpoints"
        columns={utmColumns}
        rows={page && itemsOf(page)}
        rowKey={(r) => r.id ?? ''}
        totalCount={page && totalOf(page)}
        page={pageNo}
        size={PAGE_SIZE}
        sort={sort}
        onSort={(s) => (setPageNo(0), setSort(s))}
        onPage={setPageNo}
      />
    </div>
  );
}

function LteTable(props: { scope: Scope }) {
  const [minUsage, setMinUsage] = useState('');
  const [sort, setSort] = useState<Sort<LteSortField> | undefined>({ field: 'displayName', direction: 'ASC' });
  const [pageNo, setPageNo] = useState(0);
  const usage = minUsage === '' ? undefined : Number(minUsage);
  const { page, error } = usePage(
    () => searchLte(props.scope, { page: pageNo, size: PAGE_SIZE, sort }, usage),
    [props.scope.orgId, props.scope.includeChildren, usage, sort?.field, sort?.direction, pageNo],
  );
  return (
    <div>
      <div class="filters">
        <label for="lte-usage">Data usage greater than</label>
        <input id="lte-usage" type="number" min={0} value={minUsage} onChange={(e) => (setPageNo(0), setMinUsage((e.currentTarget as HTMLInputElement).value))} />
      </div>
      <div class="table-actions">
        <ExportButtons id="lte" search={() => ({ family: 'lte', body: lteSearchBody(props.scope, { page: 0, size: PAGE_SIZE, sort }, usage) })} />
      </div>
      <Message kind="error" text={error} />
      <DataTable
        id="lte"
        caption="LTE endpoints"
        columns={lteColumns}
        rows={page && itemsOf(page)}
        rowKey={(r) => r.id ?? ''}
        totalCount={page && totalOf(page)}
        page={pageNo}
        size={PAGE_SIZE}
        sort={sort}
        onSort={(s) => (setPageNo(0), setSort(s))}
        onPage={setPageNo}
      />
    </div>
  );
}

export function EndpointsPage(props: { scope: Scope; family: Family; canWrite: boolean }) {
  const tabs: [Family, string][] = [
    ['agents', 'Agents'],
    ['utm', 'UTM'],
    ['lte', 'LTE'],
  ];
  return (
    <section id="endpoints" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title" tabIndex={-1}>
        Endpoints
      </h2>
      <nav class="tabs" aria-label="Endpoint families">
        {tabs.map(([f, label]) => (
          <a key={f} href={`#/endpoints/${f}`} aria-current={props.family === f ? 'page' : undefined} data-family={f}>
            {label}
          </a>
        ))}
      </nav>
      {props.family === 'agents' && <AgentsTable scope={props.scope} canWrite={props.canWrite} />}
      {props.family === 'utm' && <UtmTable scope={props.scope} />}
      {props.family === 'lte' && <LteTable scope={props.scope} />}
    </section>
  );
}
