/**
 * The OpenAPI document as device teams use it: openapi-generator (fetched from Maven Central)
 * makes a `typescript-fetch` and a `java` (native) client from the document the service serves;
 * both compile strictly, their models carry the document's type names (not an operation's, a
 * status code's or a position's), and a flow through the TypeScript client works against the
 * running service. docs/api.md gives the same commands.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { sharedApp, type TestApp } from '../helpers/app.js';
import { P } from '../helpers/http.js';
import { generateClient, javaHome } from '../helpers/client-generator.js';

/** test/clients/typescript-flow.ts as seen from here (it compiles only beside a generated client). */
interface FlowResult {
  created: string[];
  renamed: string | undefined;
  conflict: { status: number; error: string };
  pages: number;
  walked: string[];
  dryRun: { matched: number; allAgents: boolean };
  job: { id?: string; state: string };
  repeatedJob: { id?: string };
}
type RunFlow = (input: { basePath: string; token: string; orgId: string }) => Promise<FlowResult>;

const ROOT = path.resolve('generated/clients');
const SPEC = path.join(ROOT, 'openapi.json');
const TS = path.join(ROOT, 'typescript-fetch');
const JAVA = path.join(ROOT, 'java');

/** Types of the interface specification and of the extensions that must reach clients under their own names. */
const NAMED_TYPES = [
  'Endpoint',
  'AgentEndpoint',
  'UtmEndpoint',
  'LteEndpoint',
  'Host',
  'Site',
  'Address',
  'UserKey',
  'SeqNoPrimaryTerm',
  'LicenseInfo',
  'OrgLicenseContract',
  'EnabledModules',
  'EndpointCommandMessage',
  'EndpointCommandMessageDelivery',
  'NetworkHeartbeat',
  'NetworkHost',
  'EndpointInstalledSoftware',
  'AggregationTermBucket',
  'CountWrapper',
  'Job',
  'JobAction',
  'AuditEvent',
  'ConnectionStatusCount',
  'AgentEndpointPage',
  'UtmEndpointPage',
  'ErrorBody',
];

/** Model names a generator makes up for an unnamed schema: after an operation, a status code or a position. */
function madeUpNames(models: string[], operationIds: string[]): string[] {
  const ops = operationIds.map((id) => id[0].toUpperCase() + id.slice(1));
  return models.filter(
    (m) => /Inner$|AnyOf|OneOf|AllOf|\d{3}Response|^Response\d/.test(m) || ops.some((op) => m.startsWith(op)),
  );
}

function modelNames(dir: string, ext: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(ext) && f !== `index${ext}`)
    .map((f) => f.slice(0, -ext.length));
}

describe('generated clients (openapi-generator typescript-fetch and java)', function () {
  this.timeout(900_000);
  let t: TestApp;
  let operationIds: string[];

  before(async () => {
    t = await sharedApp();
    const res = await fetch(`${t.url}${P}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    operationIds = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    fs.mkdirSync(ROOT, { recursive: true });
    fs.writeFileSync(SPEC, JSON.stringify(doc, null, 2));
    generateClient(SPEC, 'typescript-fetch', TS, { supportsES6: 'true' });
  });

  it("names the TypeScript models after the document's types: the spec's names present, at most 5 % made up", () => {
    const models = modelNames(path.join(TS, 'models'), '.ts');
    expect(models).to.include.members(NAMED_TYPES);
    const madeUp = madeUpNames(models, operationIds);
    expect(madeUp.length / models.length, `made-up model names: ${madeUp.join(', ')}`).to.be.at.most(0.05);
  });

  it('types the endpoint family and the job actions as discriminated unions, not one interface with every field', () => {
    const endpoint = fs.readFileSync(path.join(TS, 'models', 'Endpoint.ts'), 'utf8');
    expect(endpoint).to.match(
      /export type Endpoint = \{ type: 'EXTERNAL_UTM' \} & UtmEndpoint \| .*\{ type: 'VC_ENDPOINT' \} & AgentEndpoint/,
    );
    const action = fs.readFileSync(path.join(TS, 'models', 'JobAction.ts'), 'utf8');
    expect(action).to.match(/export type JobAction = .*& SendCommandAction/);
    const agent = fs.readFileSync(path.join(TS, 'models', 'AgentEndpoint.ts'), 'utf8');
    expect(agent).not.to.contain('serialId');
  });

  it('types each operation by its one success answer, and each field by a named type, not by a parameter the type resembles', () => {
    const jobApi = fs.readFileSync(path.join(TS, 'apis', 'JobApi.ts'), 'utf8');
    expect(jobApi).to.match(/async createJob\(requestParameters: CreateJobRequest[^)]*\): Promise<Job>/);
    expect(jobApi).to.match(/async dryRunJob\(requestParameters: DryRunJobRequest[^)]*\): Promise<JobDryRun>/);
    const newToken = fs.readFileSync(path.join(TS, 'models', 'NewToken.ts'), 'utf8');
    expect(newToken).to.match(/expiresAt\?: TokenExpiry;/);
    const agent = fs.readFileSync(path.join(TS, 'models', 'AgentEndpoint.ts'), 'utf8');
    expect(agent).to.match(/internalIps\?: Array<IpAddress>;/);
    expect(agent).to.match(/lastConnect\?: IsoDateTime;/);
    // A model named after an operation's parameter is that parameter's own; no other model uses it.
    const models = modelNames(path.join(TS, 'models'), '.ts');
    const parameterModels = models.filter((m) => /Parameter(Inner)?$/.test(m));
    const borrowing = models
      .filter((m) => !parameterModels.includes(m))
      .filter((m) => parameterModels.some((p) => fs.readFileSync(path.join(TS, 'models', `${m}.ts`), 'utf8').includes(`from './${p}'`)));
    expect(borrowing, `models typed by a parameter's schema: ${borrowing.join(', ')}`).to.deep.equal([]);
  });

  it("compiles the TypeScript client with a device team's flow under tsc --strict, and the flow works against the service", async () => {
    fs.copyFileSync(path.resolve('test/clients/typescript-flow.ts'), path.join(TS, 'flow.ts'));
    fs.writeFileSync(
      path.join(TS, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2022', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        include: ['**/*.ts'],
      }),
    );
    execFileSync(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', TS], { stdio: 'pipe' });

    const orgId = await t.world.org();
    const token = await t.world.token('admin', orgId);
    const flow = (await import(path.join(TS, 'flow.ts'))) as { runFlow: RunFlow };
    const r = await flow.runFlow({ basePath: t.url, token, orgId });
    expect(r.created).to.have.length(3);
    expect(r.renamed).to.equal('renamed agent');
    expect(r.conflict).to.include({ status: 409, error: 'Conflict' });
    expect(r.walked).to.have.members(r.created);
    expect(r.pages).to.equal(2);
    expect(r.dryRun).to.include({ matched: 3, allAgents: false });
    expect(r.job.state).to.equal('QUEUED');
    expect(r.repeatedJob.id).to.equal(r.job.id);
  });

  it('generates a Java client (native library) that javac compiles through Maven, with the same model names', () => {
    generateClient(
      SPEC,
      'java',
      JAVA,
      {
        invokerPackage: 'com.example.ecs',
        apiPackage: 'com.example.ecs.api',
        modelPackage: 'com.example.ecs.model',
        groupId: 'com.example',
        artifactId: 'ecs-client',
      },
      'native',
    );
    const models = modelNames(path.join(JAVA, 'src/main/java/com/example/ecs/model'), '.java');
    expect(models).to.include.members(NAMED_TYPES);
    const madeUp = madeUpNames(models, operationIds);
    expect(madeUp.length / models.length, `made-up model names: ${madeUp.join(', ')}`).to.be.at.most(0.05);
    execFileSync('mvn', ['-q', '-B', '-DskipTests', '-Dmaven.javadoc.skip=true', 'compile'], {
      cwd: JAVA,
      env: { ...process.env, JAVA_HOME: javaHome() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(fs.existsSync(path.join(JAVA, 'target/classes/com/example/ecs/api/EndpointApi.class'))).to.equal(true);
  });
});
