/**
 * A device team's flow through the client openapi-generator makes for `typescript-fetch`,
 * written against its generated types only. test/api/generated-clients.test.ts copies it next
 * to the generated client, compiles both with tsc --strict and runs it against the service.
 */
import {
  Configuration,
  EndpointApi,
  ErrorBodyFromJSON,
  JobApi,
  ResponseError,
  type AgentEndpoint,
  type Endpoint,
  type ErrorBody,
  type Job,
  type JobDryRun,
  type NewJob,
} from './index';

export interface FlowInput {
  basePath: string;
  /** An admin token of `orgId`. */
  token: string;
  orgId: string;
}

export interface FlowResult {
  created: string[];
  renamed: string | undefined;
  conflict: ErrorBody;
  pages: number;
  walked: string[];
  dryRun: JobDryRun;
  job: Job;
  repeatedJob: Job;
}

/** Create, read, replace with the version read, replace stale (409), walk pages by cursor, dry-run a job, start it twice with one key. */
export async function runFlow(input: FlowInput): Promise<FlowResult> {
  const configuration = new Configuration({ basePath: input.basePath, apiKey: () => input.token });
  const endpoints = new EndpointApi(configuration);
  const jobs = new JobApi(configuration);

  const created: string[] = [];
  for (const name of ['first', 'second', 'third']) {
    const agent: AgentEndpoint = { type: 'VC_ENDPOINT', orgId: input.orgId, displayName: `${name} agent` };
    const record: Endpoint = await endpoints.createEndpoint({ endpoint: { ...agent, type: 'VC_ENDPOINT' } });
    if (record.id === undefined) throw new Error('a created endpoint has an id');
    created.push(record.id);
  }

  // The record read goes back as it is: the same type for the read and the replace.
  const read = await endpoints.getEndpoint({ id: created[0] });
  read.displayName = 'renamed agent';
  const replaced = await endpoints.replaceEndpoint({ id: created[0], endpoint: read });

  let conflict: ErrorBody | undefined;
  try {
    await endpoints.replaceEndpoint({ id: created[0], endpoint: read }); // `read` still holds the version before the replace
  } catch (e) {
    if (!(e instanceof ResponseError)) throw e;
    conflict = ErrorBodyFromJSON(await e.response.json());
  }
  if (!conflict) throw new Error('a stale version answers 409');

  const walked: string[] = [];
  let pages = 0;
  let cursor: string | undefined = 'start';
  while (cursor !== undefined) {
    const page = await endpoints.searchEndpoints({
      cursor,
      pagedEndpointCriteria: {
        criteria: { orgId: input.orgId },
        pageRequest: { size: 2, sort: [{ field: 'id', direction: 'ASC' }] },
      },
    });
    pages++;
    for (const item of page.items) if (item.id !== undefined) walked.push(item.id);
    cursor = page.nextCursor;
  }

  const idempotencyKey = `flow-${input.orgId}`;
  const newJob: NewJob = { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId: input.orgId } };
  // The dry run is an operation of its own, so each operation has one success type.
  const dryRun: JobDryRun = await jobs.dryRunJob({ newJob });
  const job: Job = await jobs.createJob({ newJob, idempotencyKey });
  const repeatedJob: Job = await jobs.createJob({ newJob, idempotencyKey });

  return { created, renamed: replaced.displayName, conflict, pages, walked, dryRun, job, repeatedJob };
}
