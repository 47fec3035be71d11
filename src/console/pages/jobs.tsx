/**
 * Bulk actions as jobs: create one from the agents table's current criteria (after a
 * confirmation naming how many agents the job's dry run matches and in which organizations; a
 * large SOFT_DELETE asks for the count to be typed), list jobs with their progress (polled
 * while any is QUEUED or RUNNING), cancel, and show failure samples.
 */
import { useEffect, useState } from 'preact/hooks';
import { Message } from '../components/message';
import { StatusBadge } from '../components/status-badge';
import { describeError } from '../services/client';
import { agentCriteria } from '../services/endpoints';
import {
  cancelJob,
  createJob,
  dryRunJob,
  getAgentCriteria,
  listJobs,
  selectsEverything,
  type Job,
  type JobAction,
  type JobCriteria,
  type JobDryRun,
  type JobPage,
} from '../services/jobs';
import { MODULES, type ModuleName } from '../services/modules';
import type { Scope } from '../services/scope';
import { itemsOf, totalOf } from '../services/types';

type ActionType = JobAction['type'];
type LicenseType = Extract<JobAction, { licenseType: unknown }>['licenseType'];
const LICENSE_TYPES: LicenseType[] = ['ATC', 'BDHL', 'DCI'];
const ACTIONS: [ActionType, string][] = [
  ['SEND_COMMAND', 'Send a command'],
  ['ENABLE_MODULE', 'Enable a module'],
  ['DISABLE_MODULE', 'Disable a module'],
  ['ASSIGN_LICENSE', 'Assign a license type'],
  ['SOFT_DELETE', 'Soft-delete'],
];
const POLL_MS = 1000;

function describeAction(a: JobAction): string {
  switch (a.type) {
    case 'SEND_COMMAND':
      return `send command ${a.command}`;
    case 'ENABLE_MODULE':
      return `enable module ${a.module}`;
    case 'DISABLE_MODULE':
      return `disable module ${a.module}`;
    case 'ASSIGN_LICENSE':
      return `assign license ${a.licenseType}`;
    default:
      return 'soft-delete';
  }
}

function Progress(props: { job: Job }) {
  const { matched, done, failed } = props.job;
  const pct = matched === 0 ? (props.job.state === 'DONE' ? 100 : 0) : Math.round(((done + failed) / matched) * 100);
  return (
    <div class="progress" data-progress={String(pct)}>
      <progress max={100} value={pct} aria-label={`Job progress: ${pct} %`} />
      <span>
        {pct} % — {done} done, {failed} failed of {matched}
      </span>
    </div>
  );
}

/**
 * The confirmation: the dry run's count and organizations before anything acts; a SOFT_DELETE
 * above the service's threshold (typedConfirmation) starts only once the count is typed.
 */
function ConfirmJob(props: {
  action: JobAction;
  dry: JobDryRun;
  everything: boolean;
  typed: string;
  onType(v: string): void;
  onConfirm(): void;
  onCancel(): void;
}) {
  const { matched, organizations, typedConfirmation } = props.dry;
  const typedOk = !typedConfirmation || props.typed.trim() === String(matched);
  return (
    <div class="confirm" role="alertdialog" aria-labelledby="job-confirm-text" data-job-confirm={String(matched)} data-job-typed={String(typedConfirmation)}>
      <p id="job-confirm-text">
        {describeAction(props.action)} on <strong>{matched.toLocaleString('en-US')}</strong> matching agent{matched === 1 ? '' : 's'}
        {props.everything ? ', every agent you can see' : ''}, in {organizations.length} organization{organizations.length === 1 ? '' : 's'}?
      </p>
      <ul class="note" data-job-orgs>
        {organizations.map((o) => (
          <li key={o.orgId} data-job-org={o.orgId} data-count={String(o.count)}>
            {o.orgId}: {o.count.toLocaleString('en-US')}
          </li>
        ))}
      </ul>
      {typedConfirmation && (
        <>
          <label for="job-confirm-count">Type the number of agents to soft-delete ({matched}) to confirm</label>
          <input id="job-confirm-count" inputMode="numeric" autoComplete="off" value={props.typed} onInput={(e) => props.onType((e.currentTarget as HTMLInputElement).value)} />
        </>
      )}
      <button type="button" id="job-confirm" disabled={!typedOk || matched === 0} onClick={props.onConfirm}>
        Start the job
      </button>
      <button type="button" id="job-cancel-create" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

function CreateJob(props: { scope: Scope; onCreated(): void }) {
  const criteria: JobCriteria = getAgentCriteria() ?? agentCriteria(props.scope, { showInactive: true });
  const [type, setType] = useState<ActionType>('SEND_COMMAND');
  const [command, setCommand] = useState('');
  const [module, setModule] = useState<ModuleName>('cmd');
  const [licenseType, setLicenseType] = useState<LicenseType>('ATC');
  const [confirming, setConfirming] = useState<{ action: JobAction; dry: JobDryRun } | undefined>();
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const action = (): JobAction => {
    if (type === 'SEND_COMMAND') return { type, command: command.trim() };
    if (type === 'ENABLE_MODULE' || type === 'DISABLE_MODULE') return { type, module };
    if (type === 'ASSIGN_LICENSE') return { type, licenseType };
    return { type: 'SOFT_DELETE' };
  };
  return (
    <div class="panel" id="job-create">
      <h3>New job</h3>
      <p class="note">
        Agents matching: <code data-job-criteria>{JSON.stringify(criteria)}</code> (the agents table's criteria; set them there and choose "Bulk action on these
        agents…").
      </p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setError(undefined);
          setNotice(undefined);
          const a = action();
          // What the job will act on: its dry run (the same request to POST /jobs/dry-run), nothing started yet.
          setTyped('');
          dryRunJob(a, criteria).then(
            (dry) => setConfirming({ action: a, dry }),
            (err: unknown) => setError(describeError(err)),
          );
        }}
      >
        <label for="job-action">Action</label>
        <select id="job-action" value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as ActionType)}>
          {ACTIONS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {type === 'SEND_COMMAND' && (
          <>
            <label for="job-command">Command</label>
            <input id="job-command" required value={command} onInput={(e) => setCommand((e.currentTarget as HTMLInputElement).value)} />
          </>
        )}
        {(type === 'ENABLE_MODULE' || type === 'DISABLE_MODULE') && (
          <>
            <label for="job-module">Module</label>
            <select id="job-module" value={module} onChange={(e) => setModule((e.currentTarget as HTMLSelectElement).value as ModuleName)}>
              {MODULES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </>
        )}
        {type === 'ASSIGN_LICENSE' && (
          <>
            <label for="job-license">License type</label>
            <select id="job-license" value={licenseType} onChange={(e) => setLicenseType((e.currentTarget as HTMLSelectElement).value as LicenseType)}>
              {LICENSE_TYPES.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" id="job-review">
          Review…
        </button>
      </form>
      {confirming && (
        <ConfirmJob
          action={confirming.action}
          dry={confirming.dry}
          everything={selectsEverything(criteria)}
          typed={typed}
          onType={setTyped}
          onConfirm={() => {
            const a = confirming.action;
            setConfirming(undefined);
            createJob(a, criteria).then(
              (j) => (setNotice(`Job ${j.id} queued.`), props.onCreated()),
              (err: unknown) => setError(describeError(err)),
            );
          }}
          onCancel={() => setConfirming(undefined)}
        />
      )}
      <Message kind="error" text={error} testId="job-error" />
      <Message kind="notice" text={notice} testId="job-notice" />
    </div>
  );
}

export function JobsPage(props: { scope: Scope; canWrite: boolean }) {
  const [jobs, setJobs] = useState<JobPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const reload = () => setTick((t) => t + 1);
  useEffect(() => {
    let live = true;
    listJobs().then(
      (p) => live && setJobs(p),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [tick]);
  const active = jobs ? itemsOf(jobs).some((j) => j.state === 'QUEUED' || j.state === 'RUNNING') : false;
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [active, jobs]);
  return (
    <section id="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title" tabIndex={-1}>
        Jobs
      </h2>
      {props.canWrite && <CreateJob scope={props.scope} onCreated={reload} />}
      <Message kind="error" text={error} />
      <div class="table-wrap" data-table="jobs">
        <table class="data">
          <caption>
            Jobs, newest first{' '}
            <span class="total" data-total={jobs ? String(totalOf(jobs)) : ''}>
              {jobs ? `(${totalOf(jobs)} in total)` : ''}
            </span>
          </caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Action</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">Failures</th>
              <th scope="col">
                <span class="visually-hidden">Cancel</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {jobs &&
              itemsOf(jobs).map((j) => (
                <tr key={j.id} data-job={j.id} data-job-state={j.state}>
                  <td>{j.createdAt ? new Date(j.createdAt).toLocaleString('en-GB') : ''}</td>
                  <td>{describeAction(j.action)}</td>
                  <td>
                    <StatusBadge status={j.state} />
                    {j.reason ? <div class="note">{j.reason}</div> : null}
                  </td>
                  <td>
                    <Progress job={j} />
                  </td>
                  <td>
                    {j.failures.length > 0 ? (
                      <details>
                        <summary>{j.failed} failed</summary>
                        <ul data-job-failures>
                          {j.failures.map((f) => (
                            <li key={f.endpointId}>
                              <a href={`#/endpoint/${encodeURIComponent(f.endpointId)}`}>{f.endpointId}</a>: {f.status} {f.reason}
                            </li>
                          ))}
                        </ul>
                      </details>
                    ) : (
                      'none'
                    )}
                  </td>
                  <td>
                    {props.canWrite && (j.state === 'QUEUED' || j.state === 'RUNNING') && (
                      <button
                        type="button"
                        data-cancel-job={j.id}
                        onClick={() => cancelJob(j.id).then(reload, (e: unknown) => (setError(describeError(e)), reload()))}
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            {jobs && itemsOf(jobs).length === 0 && (
              <tr>
                <td colSpan={6}>No jobs yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
