/**
 * The composition root: every resource's store and service is built once here (each by its
 * folder's builder), with the HTTP layer's authenticator and the background tasks, and every
 * route declaration is collected here. Adding a resource means adding its builder's result to
 * `Services` and its routes to `allRoutes`.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Logger } from './log.js';
import { taskOf, type Task } from './lifecycle.js';
import { Authenticator } from './http/auth.js';
import type { RouteSpec } from './http/routes.js';
import { ChangeFeedStore } from './store/change-feed.js';
import { LeaseStore } from './store/lease.js';
import { RolloverRetention } from './store/retention.js';
import type { StoreContext } from './store/client.js';
import { DeviceMigrationService } from './migration/device-migration.js';
import type { BaseDeps } from './resources/deps.js';
import { ChangeWatcher } from './resources/change-watcher.js';
import { createAudit } from './resources/audit/index.js';
import { auditRoutes } from './resources/audit/routes.js';
import type { AuditService } from './resources/audit/service.js';
import { createBundles } from './resources/bundles/index.js';
import type { BundleService } from './resources/bundles/service.js';
import { bundleRoutes } from './resources/bundles/routes.js';
import { createClientVersions } from './resources/client-versions/index.js';
import type { ClientVersionService } from './resources/client-versions/service.js';
import { clientVersionRoutes } from './resources/client-versions/routes.js';
import { createCommands } from './resources/commands/index.js';
import type { CommandService } from './resources/commands/service.js';
import { commandRoutes } from './resources/commands/routes.js';
import { deviceMigrationRoutes } from './resources/device-migration/routes.js';
import { createEndpoints } from './resources/endpoints/index.js';
import type { EndpointService } from './resources/endpoints/service.js';
import type { EndpointPresence } from './resources/endpoints/presence.js';
import { endpointFamilyRoutes } from './resources/endpoints/routes.js';
import { presenceRoutes } from './resources/endpoints/presence-routes.js';
import { createIdempotencyKeys } from './resources/idempotency/index.js';
import type { IdempotencyKeyDocStore } from './resources/idempotency/store.js';
import { createInstaller } from './resources/installer/index.js';
import type { InstallerService } from './resources/installer/service.js';
import { installerRoutes } from './resources/installer/routes.js';
import { createJobs, type Jobs } from './resources/jobs/index.js';
import { jobRoutes } from './resources/jobs/routes.js';
import { createRollouts, type Rollouts } from './resources/rollouts/index.js';
import { rolloutRoutes } from './resources/rollouts/routes.js';
import { createOrgLicenseContracts } from './resources/license-contracts/index.js';
import type { OrgLicenseContractService } from './resources/license-contracts/service.js';
import { orgLicenseContractRoutes } from './resources/license-contracts/routes.js';
import { createLicenses } from './resources/licenses/index.js';
import type { LicenseService } from './resources/licenses/service.js';
import { licenseRoutes } from './resources/licenses/routes.js';
import { createModules } from './resources/modules/index.js';
import type { ModuleService } from './resources/modules/service.js';
import { moduleRoutes } from './resources/modules/routes.js';
import { createNetwork } from './resources/network/index.js';
import type { HeartbeatRetention } from './resources/network/retention.js';
import type { NetworkService } from './resources/network/service.js';
import { networkRoutes } from './resources/network/routes.js';
import { createOrgAgentConfig } from './resources/org-agent-config/index.js';
import type { OrgAgentConfigService } from './resources/org-agent-config/service.js';
import { orgAgentConfigRoutes } from './resources/org-agent-config/routes.js';
import { createOrganizations } from './resources/organizations/index.js';
import type { AncestryKeeper } from './resources/organizations/ancestry-migration.js';
import { unstampedCount } from './resources/organizations/ancestry-migration.js';
import type { OrganizationService } from './resources/organizations/service.js';
import { organizationRoutes } from './resources/organizations/routes.js';
import { organizationTreeRoutes } from './resources/organizations/tree-routes.js';
import { createReports } from './resources/reports/index.js';
import type { ReportService } from './resources/reports/service.js';
import { reportRoutes } from './resources/reports/routes.js';
import { createSessions } from './resources/sessions/index.js';
import type { SessionRechecker } from './resources/sessions/model.js';
import type { SessionService } from './resources/sessions/service.js';
import { createSoftwareInventory } from './resources/software-inventory/index.js';
import type { SoftwareInventoryService } from './resources/software-inventory/service.js';
import { softwareInventoryRoutes } from './resources/software-inventory/routes.js';
import { createTokens } from './resources/tokens/index.js';
import type { TokenService } from './resources/tokens/service.js';
import { tokenRoutes } from './resources/tokens/routes.js';
import { createVendorData } from './resources/vendor-data/index.js';
import type { VendorDataService } from './resources/vendor-data/service.js';
import { vendorDataRoutes } from './resources/vendor-data/routes.js';
import { createAgentChannel } from './resources/agent-channel/index.js';
import type { AgentChannelService } from './resources/agent-channel/service.js';
import { agentChannelRoutes } from './resources/agent-channel/routes.js';

export interface Services {
  authenticator: Authenticator;
  orgs: OrganizationService;
  tokens: TokenService;
  clientVersions: ClientVersionService;
  endpoints: EndpointService;
  deviceMigration: DeviceMigrationService;
  modules: ModuleService;
  bundles: BundleService;
  installer: InstallerService;
  licenses: LicenseService;
  orgLicenseContracts: OrgLicenseContractService;
  softwareInventory: SoftwareInventoryService;
  vendorData: VendorDataService;
  commands: CommandService;
  network: NetworkService;
  reports: ReportService;
  orgAgentConfig: OrgAgentConfigService;
  /** Idempotency-Key records, for the router (src/http/idempotency.ts). */
  idempotencyKeys: IdempotencyKeyDocStore;
  /** Background: keeps this instance's caches in step with the others (started and stopped by the server). */
  changeWatcher: ChangeWatcher;
  /** The change feed's writer: its outbox is drained before the store client closes. */
  changeFeed: ChangeFeedStore;
  /** Background: change-feed retention, the same mechanism as the heartbeats' (started and stopped by the server). */
  changeRetention: RolloverRetention;
  /** Background: heartbeat retention, one instance at a time (started and stopped by the server). */
  heartbeatRetention: HeartbeatRetention;
  /** Bulk-action jobs: the service, and its runner (started and stopped by the server). */
  jobs: Jobs;
  /** Agent-version rollouts in rings: the service, and its driver (started and stopped by the server). */
  rollouts: Rollouts;
  /** The audit trail: written by the router's audit hook, searched through its route. */
  audit: AuditService;
  /** Background: audit retention, the same mechanism as the heartbeats' (started and stopped by the server). */
  auditRetention: RolloverRetention;
  /** Presence of endpoints (last seen, POTENTIALLY_DISCONNECTED). */
  presence: EndpointPresence;
  /** Login sessions of people signed in through the identity provider (docs/sso.md). */
  sessions: SessionService;
  /** The store context the services write through (with the organization tree for the ancestry of records). */
  storeContext: StoreContext;
  /** Background: stamps the ancestry on records an older release wrote without it (started and stopped by the server). */
  ancestry: AncestryKeeper;
  /** Agents holding a channel on this instance (its tick is a background task). */
  agentChannel: AgentChannelService;
}

/** How long change-feed entries are kept: readers need them for seconds; a day covers any pause but a reload. */
const CHANGE_RETENTION_DAYS = 1;

export function createServices({ config, store: base, log, sessionRechecker }: BaseDeps & { sessionRechecker?: SessionRechecker }): Services {
  const instanceName = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const feed = new ChangeFeedStore(base, instanceName);
  const retentionSchedule = {
    intervalMs: config.maintenance.retentionIntervalSeconds * 1000,
    leaseMs: config.maintenance.retentionLeaseSeconds * 1000,
    holder: instanceName,
  };
  // Every store below stamps the ancestry of org-scoped records from the organization tree (docs/adr/0085).
  const organizations = createOrganizations({ config, store: base, log }, feed, instanceName);
  const orgs = organizations.service;
  const deps: BaseDeps = { config, store: organizations.store, log };
  const store = deps.store;
  const { service: tokens, cache: authenticator } = createTokens(deps, { orgs, feed }, (verifier) =>
    new Authenticator(verifier, config.adminToken, config.tokenCacheSeconds, {
      negativeCacheSeconds: config.tokenNegativeCacheSeconds,
      lookupsPerMinute: config.authFailuresPerMinute,
    }),
  );
  const { service: audit, retention: auditRetention } = createAudit(deps, retentionSchedule);
  const sessions = createSessions(deps, { feed, audit }, sessionRechecker);
  // Built with the commands, below; the change feed's subscribers reach them through these.
  const late: { agentChannel?: AgentChannelService } = {};
  const rolloutDriver: { wake(): void } = { wake: () => undefined };
  const changeWatcher = new ChangeWatcher(
    feed,
    [
      { feed: 'tokens', onChange: (ids) => (ids ? authenticator.forget(...ids) : authenticator.forgetAll()) },
      { feed: 'organizations', onChange: (ids) => (ids ? orgs.applyChanged(ids) : orgs.reload()) },
      { feed: 'sessions', onChange: (ids) => sessions.forget(ids) },
      // Commands became ready through another instance: their agents held here are woken.
      { feed: 'commands', onChange: (ids) => late.agentChannel?.onFeed(ids) },
      // A rollout changed on another instance (paused, resumed, rolled back): this instance's driver looks at once.
      { feed: 'rollouts', onChange: () => rolloutDriver.wake() },
    ],
    config.changePollMs,
    log,
    { onCurrent: () => orgs.confirmCurrent() },
  );
  const changeRetention = new RolloverRetention(
    feed,
    new LeaseStore(store),
    { retentionDays: CHANGE_RETENTION_DAYS, ...retentionSchedule },
    log,
    'change-feed-retention',
  );
  const clientVersions = createClientVersions(deps, orgs);
  const { service: endpoints, store: endpointStore, presence } = createEndpoints(deps, { orgs, tokens });
  const deviceMigration = new DeviceMigrationService(endpointStore, {
    databaseUrl: config.databaseUrl,
    schema: config.sqlSchema,
    log,
  });
  const bundles = createBundles(deps);
  const modules = createModules(deps, { endpoints, orgs, bundles });
  const installer = createInstaller(deps, clientVersions);
  const licenses = createLicenses(deps, orgs);
  const orgLicenseContracts = createOrgLicenseContracts(deps, orgs);
  const softwareInventory = createSoftwareInventory(deps, { endpoints, orgs });
  const vendorData = createVendorData(deps, endpoints);
  const commands = createCommands(deps, { endpoints, modules, vendorData, presence });
  const agentChannel = createAgentChannel(deps, { commands, endpoints, presence, feed });
  late.agentChannel = agentChannel;
  const { service: network, retention: heartbeatRetention } = createNetwork(deps, presence, retentionSchedule);
  const jobs = createJobs(deps, { endpoints, commands, modules, licenses, orgs }, retentionSchedule);
  // A revoked token's queued and running jobs are cancelled with it (docs/adr/0098-revoked-creator-cancels-jobs.md).
  tokens.onRevoked = async (tokenId) => {
    await jobs.service.cancelCreatedBy(tokenId);
  };
  const rollouts = createRollouts(deps, {
    agents: endpoints.agentScan,
    commands: commands.batch,
    orgs,
    pins: clientVersions,
    audit,
    feed,
    holder: instanceName,
  });
  rolloutDriver.wake = () => rollouts.driver.wake();
  const reports = createReports(endpoints);
  const orgAgentConfig = createOrgAgentConfig(deps, orgs, () => presence.invalidate());
  presence.useTimeouts(orgAgentConfig);
  softwareInventory.presence = presence;
  return {
    authenticator,
    orgs,
    tokens,
    clientVersions,
    endpoints,
    deviceMigration,
    modules,
    bundles,
    installer,
    licenses,
    orgLicenseContracts,
    softwareInventory,
    vendorData,
    commands,
    network,
    reports,
    orgAgentConfig,
    idempotencyKeys: createIdempotencyKeys(deps),
    changeWatcher,
    changeFeed: feed,
    changeRetention,
    heartbeatRetention,
    jobs,
    rollouts,
    audit,
    auditRetention,
    presence,
    sessions,
    storeContext: store,
    ancestry: organizations.ancestry,
    agentChannel,
  };
}

export function allRoutes(s: Services): RouteSpec[] {
  return [
    ...endpointFamilyRoutes(s.endpoints),
    ...deviceMigrationRoutes(s.deviceMigration),
    ...clientVersionRoutes(s.clientVersions),
    ...organizationRoutes(s.orgs),
    ...organizationTreeRoutes(s.orgs),
    ...tokenRoutes(s.tokens),
    ...moduleRoutes(s.modules),
    ...bundleRoutes(s.bundles),
    ...installerRoutes(s.installer),
    ...licenseRoutes(s.licenses),
    ...orgLicenseContractRoutes(s.orgLicenseContracts),
    ...softwareInventoryRoutes(s.softwareInventory),
    ...commandRoutes(s.commands),
    ...vendorDataRoutes(s.vendorData),
    ...networkRoutes(s.network),
    ...reportRoutes(s.reports),
    ...orgAgentConfigRoutes(s.orgAgentConfig),
    ...jobRoutes(s.jobs.service),
    ...rolloutRoutes(s.rollouts.service),
    ...auditRoutes(s.audit),
    ...presenceRoutes(s.endpoints),
    ...agentChannelRoutes(s.agentChannel, s.endpoints),
  ];
}

/**
 * The background work of every instance, once the indices exist, in start order (stopped in
 * reverse by the server's Lifecycle): organization moves (started on demand, stopped last), the
 * change-feed poll (caches keep their time limits until then) and the retentions, the job
 * runner, the ancestry stamping and the sweep of ended login sessions.
 */
export function backgroundTasks(s: Services): Task[] {
  return [
    // Moves start on demand and resume in onIndicesReady; stopping waits for the pass in flight.
    { name: 'organization moves', start: () => undefined, stop: () => s.orgs.moveTask?.stop() },
    taskOf('change feed poll', s.changeWatcher),
    taskOf('change feed retention', s.changeRetention),
    taskOf('heartbeat retention', s.heartbeatRetention),
    taskOf('job runner', s.jobs.runner),
    taskOf('job retention', s.jobs.retention),
    taskOf('rollout driver', s.rollouts.driver),
    taskOf('audit retention', s.auditRetention),
    taskOf('ancestry stamping', s.ancestry),
    { name: 'sweep of ended login sessions', start: () => s.sessions.startSweeping(), stop: () => s.sessions.stopSweeping() },
    // Last, so stopped first: held agents are sent away (spread Retry-After) before anything else stops.
    taskOf('agent channel', s.agentChannel),
  ];
}

/** Start-up work that needs the indices in place (runs after every template and alias exists). */
export async function onIndicesReady(s: Services, log: Logger): Promise<void> {
  await s.bundles.loadCatalogue(log);
  // Presence reads the per-organization timeouts before the first request (queries never wait for them).
  await s.presence.refresh();
  // A move left RUNNING by a stopped instance resumes here (its passes are idempotent).
  await s.orgs.resumeMove();
  // Records written before records carried their organization's ancestry are invisible to subtree reads until migrated.
  const unstamped = await unstampedCount(s.storeContext);
  if (unstamped > 0) {
    log.warn(
      { records: unstamped },
      `${unstamped} org-scoped records carry no organization ancestry and are invisible to subtree searches until the instances stamp them in the background (at once: npm run ops -- org-paths)`,
    );
  }
}
