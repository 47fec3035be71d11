/**
 * The audit trail (POST /audit/search-page): admin and system tokens. A reader's token is
 * refused by the service (403); the page says so in words instead of a table.
 */
import { useEffect, useState } from 'preact/hooks';
import { Message } from '../components/message';
import { StatusBadge } from '../components/status-badge';
import { ApiError, describeError } from '../services/client';
import { searchAudit, type AuditCriteria, type AuditPage } from '../services/audit';
import { itemsOf, totalOf } from '../services/types';

const PAGE_SIZE = 20;
type Kind = NonNullable<AuditCriteria['kind']>;

interface Form {
  from: string;
  to: string;
  actor: string;
  operation: string;
  targetType: string;
  targetId: string;
  kind: Kind | '';
  status: string;
}
const EMPTY: Form = { from: '', to: '', actor: '', operation: '', targetType: '', targetId: '', kind: '', status: '' };

/** A datetime-local value (the analyst's local time) as an ISO instant. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

function criteriaOf(f: Form): AuditCriteria {
  const c: AuditCriteria = {};
  if (f.from) c.from = iso(f.from);
  if (f.to) c.to = iso(f.to);
  // A person is found by e-mail address, a token by its id.
  const actor = f.actor.trim();
  if (actor.includes('@')) c.actorEmail = actor;
  else if (actor) c.actorTokenId = actor;
  if (f.operation.trim()) c.operation = f.operation.trim();
  if (f.targetType.trim()) c.targetType = f.targetType.trim();
  if (f.targetId.trim()) c.targetId = f.targetId.trim();
  if (f.kind) c.kind = f.kind;
  if (f.status) c.status = Number(f.status);
  return c;
}

export function AuditPage() {
  const [form, setForm] = useState<Form>(EMPTY);
  const [applied, setApplied] = useState<Form>(EMPTY);
  const [pageNo, setPageNo] = useState(0);
  const [page, setPage] = useState<AuditPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [refused, setRefused] = useState(false);

  useEffect(() => {
    let live = true;
    setPage(undefined);
    setError(undefined);
    searchAudit(criteriaOf(applied), pageNo, PAGE_SIZE).then(
      (p) => live && setPage(p),
      (e: unknown) => {
        if (!live) return;
        if (e instanceof ApiError && e.status === 403) setRefused(true);
        else setError(describeError(e));
      },
    );
    return () => {
      live = false;
    };
  }, [applied, pageNo]);

  const field = (key: keyof Form, label: string, type: 'text' | 'number' | 'datetime-local' = 'text') => {
    const id = `audit-${key}`;
    const onInput = (e: Event) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value });
    return (
      <>
        <label for={id}>{label}</label>
        {type === 'number' ? (
          <input id={id} type="number" min={100} max={599} value={form[key]} onInput={onInput} />
        ) : type === 'datetime-local' ? (
          <input id={id} type="datetime-local" value={form[key]} onInput={onInput} />
        ) : (
          <input id={id} type="text" value={form[key]} onInput={onInput} />
        )}
      </>
    );
  };
  const pages = page ? Math.max(1, Math.ceil(totalOf(page) / PAGE_SIZE)) : 1;
  return (
    <section id="audit" aria-labelledby="audit-title">
      <h2 id="audit-title" tabIndex={-1}>
        Audit trail
      </h2>
      {refused ? (
        <p class="message error" role="alert" data-audit-refused>
          The audit trail is for admin and system tokens. Your token may not read it (403): sign in with an admin token of your organization.
        </p>
      ) : (
        <>
          <form
            class="filters audit-filters"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPageNo(0);
              setApplied({ ...form });
            }}
          >
            {field('from', 'From', 'datetime-local')}
            {field('to', 'To', 'datetime-local')}
            {field('actor', 'Actor (token id or e-mail)')}
            {field('operation', 'Operation')}
            {field('targetType', 'Target type')}
            {field('targetId', 'Target id')}
            <label for="audit-kind">Outcome</label>
            <select id="audit-kind" value={form.kind} onChange={(e) => setForm({ ...form, kind: (e.currentTarget as HTMLSelectElement).value as Kind | '' })}>
              <option value="">any</option>
              <option value="WRITE">write (any status)</option>
              <option value="REFUSAL">refusal (401/403, refused sign-in)</option>
              <option value="SIGN_IN">sign-in</option>
              <option value="SIGN_OUT">sign-out</option>
            </select>
            {field('status', 'HTTP status', 'number')}
            <button type="submit">Search</button>
          </form>
          <Message kind="error" text={error} />
          <div class="table-wrap" data-table="audit">
            <table class="data">
              <caption>
                Events{' '}
                <span class="total" data-total={page ? String(totalOf(page)) : ''}>
                  {page ? `(${totalOf(page).toLocaleString('en-US')} in total)` : ''}
                </span>
              </caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Operation</th>
                  <th scope="col">Target</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody aria-busy={page ? 'false' : 'true'}>
                {page &&
                  itemsOf(page).map((ev) => (
                    <tr key={ev.id} data-audit-event={ev.id} data-operation={ev.operation} data-target-id={ev.target.id ?? ''}>
                      <td>{new Date(ev.timestamp).toLocaleString('en-GB')}</td>
                      <td>
                        {ev.actor.name ?? ev.actor.tokenId ?? 'anonymous'}
                        {ev.actor.role ? ` (${ev.actor.role})` : ''}
                        {ev.actor.email && <div class="note">{ev.actor.email}</div>}
                        {ev.reason && <div class="note">{ev.reason}</div>}
                      </td>
                      <td>
                        {ev.operation}
                        <div class="note">
                          {ev.method} {ev.path}
                        </div>
                      </td>
                      <td>
                        {ev.target.type ?? ''} {ev.target.id ?? ''}
                      </td>
                      <td>
                        <StatusBadge status={ev.kind === 'REFUSAL' ? 'REFUSED' : ev.status >= 400 ? 'FAILED' : 'OK'} /> {ev.status}
                      </td>
                    </tr>
                  ))}
                {page && itemsOf(page).length === 0 && (
                  <tr>
                    <td colSpan={5}>Nothing matches.</td>
                  </tr>
                )}
              </tbody>
            </table>
            <nav class="pager" aria-label="Audit pages">
              <button type="button" data-page="prev" disabled={pageNo <= 0} onClick={() => setPageNo(pageNo - 1)}>
                Previous
              </button>
              <span data-page-of={`${pageNo + 1}/${pages}`}>
                Page {pageNo + 1} of {pages}
              </span>
              <button type="button" data-page="next" disabled={pageNo + 1 >= pages} onClick={() => setPageNo(pageNo + 1)}>
                Next
              </button>
            </nav>
          </div>
        </>
      )}
    </section>
  );
}
