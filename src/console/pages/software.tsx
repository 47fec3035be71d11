/** The organization's software: titles and versions with host counts, and the hosts of one title. */
import { useEffect, useState } from 'preact/hooks';
import { DataTable, type Column, type Sort } from '../components/data-table';
import { Message } from '../components/message';
import { describeError } from '../services/client';
import type { Scope } from '../services/scope';
import { hostsWithSoftware, softwareSummary, type SoftwareRecord, type SummaryPage, type SummarySortField } from '../services/software';
import { itemsOf, totalOf } from '../services/types';

type Row = NonNullable<SummaryPage['items']>[number];
const PAGE_SIZE = 20;
const HOSTS_SHOWN = 50;

export function SoftwarePage(props: { scope: Scope }) {
  const orgId = props.scope.orgId;
  const [prefix, setPrefix] = useState('');
  const [applied, setApplied] = useState('');
  const [sort, setSort] = useState<Sort<SummarySortField>>({ field: 'count', direction: 'DESC' });
  const [pageNo, setPageNo] = useState(0);
  const [page, setPage] = useState<SummaryPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [selected, setSelected] = useState<{ name: string; version: string } | undefined>();
  const [hosts, setHosts] = useState<SoftwareRecord[] | undefined>();
  useEffect(() => {
    setPage(undefined);
    setError(undefined);
    softwareSummary(orgId, applied || undefined, pageNo, PAGE_SIZE, sort).then(setPage, (e: unknown) => setError(describeError(e)));
  }, [orgId, applied, pageNo, sort.field, sort.direction]);
  useEffect(() => {
    setHosts(undefined);
    if (selected) hostsWithSoftware(orgId, selected.name, selected.version).then(setHosts, (e: unknown) => setError(describeError(e)));
  }, [orgId, selected?.name, selected?.version]);
  const columns: Column<Row, SummarySortField>[] = [
    {
      label: 'Title',
      sortField: 'name',
      render: (r) => (
        <button type="button" class="link" data-title={`${r.name} ${r.version}`} onClick={() => setSelected({ name: r.name, version: r.version })}>
          {r.name}
        </button>
      ),
    },
    { label: 'Version', sortField: 'version', render: (r) => r.version },
    { label: 'Hosts', sortField: 'count', render: (r) => r.count.toLocaleString('en-US') },
  ];
  return (
    <section id="software" aria-labelledby="software-title">
      <h2 id="software-title" tabIndex={-1}>
        Software of {orgId}
      </h2>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setPageNo(0);
          setApplied(prefix.trim());
        }}
      >
        <label for="software-prefix">Title starts with</label>
        <input id="software-prefix" type="search" value={prefix} onInput={(e) => setPrefix((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Search</button>
      </form>
      <Message kind="error" text={error} />
      <DataTable
        id="software-summary"
        caption="Titles and versions"
        columns={columns}
        rows={page && itemsOf(page)}
        rowKey={(r) => `${r.name}\u0000${r.version}`}
        totalCount={page && totalOf(page)}
        page={pageNo}
        size={PAGE_SIZE}
        sort={sort}
        onSort={(s) => (setPageNo(0), setSort(s))}
        onPage={setPageNo}
      />
      {selected && (
        <section class="panel" id="software-hosts" aria-labelledby="software-hosts-title">
          <h3 id="software-hosts-title">
            Hosts with {selected.name} {selected.version}
          </h3>
          {hosts === undefined ? (
            <p class="loading">Loading…</p>
          ) : (
            <>
              <p data-host-count={String(hosts.length)}>
                {hosts.length} host{hosts.length === 1 ? '' : 's'}
                {hosts.length > HOSTS_SHOWN ? `; the first ${HOSTS_SHOWN} are shown` : ''}.
              </p>
              <ul class="hosts">
                {hosts.slice(0, HOSTS_SHOWN).map((h) => (
                  <li key={h.id}>
                    <a href={`#/endpoint/${encodeURIComponent(h.endpointId)}`}>{h.endpointId}</a>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}
    </section>
  );
}
