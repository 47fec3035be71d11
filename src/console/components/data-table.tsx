/** A server-paged, server-sorted table: renders one page it is given and asks for others. */
import type { ComponentChildren } from 'preact';

export interface Column<R, F extends string> {
  label: string;
  /** The API's sort field, when the column can be sorted. */
  sortField?: F;
  render(row: R): ComponentChildren;
}

export interface Sort<F extends string> {
  field: F;
  direction: 'ASC' | 'DESC';
}

export function DataTable<R, F extends string>(props: {
  id: string;
  caption: string;
  columns: Column<R, F>[];
  rows: R[] | undefined;
  rowKey(row: R): string;
  totalCount: number | undefined;
  page: number;
  size: number;
  sort: Sort<F> | undefined;
  onSort(sort: Sort<F>): void;
  onPage(page: number): void;
}) {
  const { rows, totalCount, page, size, sort } = props;
  const pages = totalCount === undefined ? 0 : Math.max(1, Math.ceil(totalCount / size));
  return (
    <div class="table-wrap" data-table={props.id}>
      <table class="data">
        <caption>
          {props.caption}{' '}
          <span class="total" data-total={totalCount === undefined ? '' : String(totalCount)}>
            {totalCount === undefined ? '' : `(${totalCount.toLocaleString('en-US')} in total)`}
          </span>
        </caption>
        <thead>
          <tr>
            {props.columns.map((c) => {
              const active = c.sortField !== undefined && sort?.field === c.sortField;
              const ariaSort = active ? (sort?.direction === 'ASC' ? 'ascending' : 'descending') : undefined;
              return (
                <th scope="col" key={c.label} aria-sort={ariaSort}>
                  {c.sortField ? (
                    <button
                      type="button"
                      class="sort"
                      data-sort={c.sortField}
                      onClick={() => props.onSort({ field: c.sortField as F, direction: active && sort?.direction === 'ASC' ? 'DESC' : 'ASC' })}
                    >
                      {c.label}
                      <span aria-hidden="true">{active ? (sort?.direction === 'ASC' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody aria-busy={rows ? 'false' : 'true'}>
          {rows?.map((r) => (
            <tr key={props.rowKey(r)} data-row={props.rowKey(r)}>
              {props.columns.map((c) => (
                <td key={c.label}>{c.render(r)}</td>
              ))}
            </tr>
          ))}
          {rows && rows.length === 0 && (
            <tr>
              <td colSpan={props.columns.length}>Nothing matches.</td>
            </tr>
          )}
        </tbody>
      </table>
      <nav class="pager" aria-label={`${props.caption} pages`}>
        <button type="button" data-page="prev" disabled={page <= 0} onClick={() => props.onPage(page - 1)}>
          Previous
        </button>
        <span data-page-of={`${page + 1}/${pages}`}>
          Page {page + 1} of {pages}
        </span>
        <button type="button" data-page="next" disabled={page + 1 >= pages} onClick={() => props.onPage(page + 1)}>
          Next
        </button>
      </nav>
    </div>
  );
}
