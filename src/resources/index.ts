/**
 * The service container and the route table: every resource's store and service is built
 * once here, and every route declaration is collected here. Adding a resource means adding
 * its service to `Services` and its routes to `allRoutes`.
 */
import type { Logger } from '../log.js';
import os from 'node:os';
import crypto from 'node:crypto';
import { Authenticator } from '../http/auth.js';
import { ChangeFeedStore } from '../store/change-feed.js';
import { LeaseStore } from '../store/lease.js';
import { ChangeWatcher } from './change-watcher.js';
import { HeartbeatRetention } from './network/retention.js';
import type { RouteSpec } from '../http/routes.js';
import { OrganizationStore } from './organizations/store.js';
import { OrganizationService } from './organizations/service.js';
import { OrgMoveStore } from './organizations/move-store.js';
import { OrgMoveTask } from './organizations/move-task.js';
import { AncestryKeeper, unstampedCount } from './organizations/ancestry-migration.js';
import { organizationRoutes } from './organizations/routes.js';
import { organizationTreeRoutes } from './organizations/tree-routes.js';
import { TokenStore } from './tokens/store.js';
import { TokenService } from './tokens/service.js';
import { tokenRoutes } from './tokens/routes.js';
import { ClientVersionStore } from './client-versions/store.js';
import { EndpointOrgConfigStore } from './client-versions/endpoint-org-config-store.js';
import { ClientVersionService, loadLatestReleases, parseConfiguredDefaults } from './client-versions/service.js';
import { clientVersionRoutes } from './client-versions/routes.js';
import { EndpointStore } from './endpoints/store.js';
import { EndpointService } from './endpoints/service.js';
import { DeviceMigrationService } from '../migration/device-migration.js';
import { deviceMigrationRoutes } from './device-migration/routes.js';
import { EndpointKeyStore } from './endpoints/keys-store.js';
import { endpointFamilyRoutes } from './endpoints/routes.js';
import { EnabledModulesStore } from './modules/store.js';
import { ModuleService } from './modules/service.js';
import { moduleRoutes } from './modules/routes.js';
import { BundleStore } from './bundles/store.js';
import { BundleService, loadCatalogueFile } from './bundles/service.js';
import { bundleRoutes } from './bundles/routes.js';
import { InstallerService } from './installer/service.js';
import { installerRoutes } from './installer/routes.js';
import { LicenseStore } from './licenses/store.js';
import { LicenseService } from './licenses/service.js';
import { licenseRoutes } from './licenses/routes.js';
import { OrgLicenseContractStore } from './license-contracts/store.js';
import { OrgLicenseContractService } from './license-contracts/service.js';
import { orgLicenseContractRoutes } from './license-contracts/routes.js';
import { SoftwareInventoryStore } from './software-inventory/store.js';
import { SoftwareInventoryService } from './software-inventory/service.js';
import { softwareInventoryRoutes } from './software-inventory/routes.js';
import { CommandMessageStore } from './commands/store.js';
import { DeliveryStore } from './commands/delivery-store.js';
import { CommandService } from './commands/service.js';
import { loadCatalogue as loadCommandCatalogue } from './commands/catalogue.js';
import { commandRoutes } from './commands/routes.js';
import { VendorDataStore } from './vendor-data/store.js';
import { VendorDataService } from './vendor-data/service.js';
import { vendorDataRoutes } from './vendor-data/routes.js';
import { HeartbeatStore } from './network/heartbeat-store.js';
import { NetworkHostStore } from './network/host-store.js';
import { NetworkService } from './network/service.js';
import { networkRoutes } from './network/routes.js';
import { ReportService } from './reports/service.js';
import { reportRoutes } from './reports/routes.js';
import { OrgAgentConfigStore } from './org-agent-config/store.js';
import { OrgAgentConfigService } from './org-agent-config/service.js';
import { orgAgentConfigRoutes } from './org-agent-config/routes.js';
import { IdempotencyKeyDocStore } from './idempotency/store.js';
import { createJobs, type Jobs } from './jobs/index.js';
import { jobRoutes } from './jobs/routes.js';
import { AuditStore } from './audit/store.js';
import { AuditService } from './audit/service.js';
import { auditRoutes } from './audit/routes.js';
import { RolloverRetention } from '../store/retention.js';
import { EndpointPresence } from './endpoints/presence.js';
import { presenceRoutes } from './endpoints/presence-routes.js';
import { CommandExpiry } from './commands/expiry.js';
import { SessionStore } from './sessions/store.js';
import { SessionService } from './sessions/service.js';
import type { SessionRechecker } from './sessions/model.js';
import { ReadyMessages } from './commands/ready.js';
import { AgentChannelService } from './agent-channel/service.js';
import { agentChannelRoutes } from './agent-channel/routes.js';

import type { BaseDeps } from './deps.js';
import type { StoreContext } from '../store/client.js';

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
  /** Agents holding a channel on this instance (its tick is started and stopped by the server). */
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
  const moves = new OrgMoveStore(base);
  const orgs = new OrganizationService(new OrganizationStore(base), config.orgCacheSeconds, feed, moves);
  // Every store below stamps the ancestry of org-scoped records from this tree (docs/adr/0085).
  const store = { ...base, ancestry: orgs };
  orgs.moveTask = new OrgMoveTask(
    store,
    moves,
    // A few change-feed polls: every instance has applied the move to its tree (and stamps the new ancestry) by then.
    { settleMs: 3 * config.changePollMs + 1000, retryMs: 2000 },
    log,
    (orgId) => orgs.moveDone(orgId),
  );
  const tokenStore = new TokenStore(store);
  const authenticator = new Authenticator(tokenStore, config.adminToken, config.tokenCacheSeconds, {
    negativeCacheSeconds: config.tokenNegativeCacheSeconds,
    lookupsPerMinute: config.authFailuresPerMinute,
  });
  const tokens = new TokenService(tokenStore, orgs, authenticator, feed);
  const auditStore = new AuditStore(store);
  const audit = new AuditService(auditStore, log);
  const sessions = new SessionService(
    new SessionStore(store),
    feed,
    audit,
    { ...config.sessions, cacheSeconds: config.tokenCacheSeconds, ...(sessionRechecker ? { rechecker: sessionRechecker } : {}) },
    log,
  );
  // Built with the commands, below; the change feed's subscriber reaches it through this.
  const late: { agentChannel?: AgentChannelService } = {};
  const changeWatcher = new ChangeWatcher(
    feed,
    [
      { feed: 'tokens', onChange: (ids) => (ids ? authenticator.forget(...ids) : authenticator.forgetAll()) },
      { feed: 'organizations', onChange: (ids) => (ids ? orgs.applyChanged(ids) : orgs.reload()) },
      { feed: 'sessions', onChange: (ids) => sessions.forget(ids) },
      // Commands became ready through another instance: their agents held here are woken.
      { feed: 'commands', onChange: (ids) => late.agentChannel?.onFeed(ids) },
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
  const clientVersions = new ClientVersionService(
    new ClientVersionStore(store),
    new EndpointOrgConfigStore(store),
    orgs,
    parseConfiguredDefaults(config.defaultClientVersions),
    loadLatestReleases(config.clientReleasesFile),
  );
  // The device migration (src/migration) copies the endpoints index itself: it shares the store, not the service.
  const endpointStore = new EndpointStore(store);
  const endpoints = new EndpointService(endpointStore, { keys: new EndpointKeyStore(store), orgs, tokens });
  // Presence is part of the endpoints resource: the store applies it to every read and stamps it on every connection-state write.
  const presence = new EndpointPresence(endpointStore, { defaultTimeoutSeconds: config.presenceTimeoutSeconds });
  endpointStore.presence = presence;
  const deviceMigration = new DeviceMigrationService(endpointStore, {
    databaseUrl: config.databaseUrl,
    schema: config.sqlSchema,
    log,
  });
  const bundles = new BundleService(new BundleStore(store), loadCatalogueFile());
  const modules = new ModuleService(new EnabledModulesStore(store), endpoints, orgs, bundles);
  const installer = new InstallerService(clientVersions, {
    baseUrl: config.installerBaseUrl,
    signingKey: config.installerSigningKey,
    ttlSeconds: config.installerUrlTtlSeconds,
  });
  const licenses = new LicenseService(new LicenseStore(store), orgs);
  const orgLicenseContracts = new OrgLicenseContractService(new OrgLicenseContractStore(store), orgs);
  const softwareInventory = new SoftwareInventoryService(new SoftwareInventoryStore(store), endpoints, orgs);
  const vendorData = new VendorDataService(new VendorDataStore(store), endpoints);
  const commandMessages = new CommandMessageStore(store);
  const commandExpiry = new CommandExpiry({ ttlSeconds: config.commandTtlSeconds, maxRetries: config.commandMaxRetries });
  const commands = new CommandService(
    commandMessages,
    new DeliveryStore(store),
    endpoints,
    modules,
    vendorData,
    loadCommandCatalogue(),
    { expiry: commandExpiry, presence },
  );
  const channel = new AgentChannelService(
    new ReadyMessages(commandMessages, commandExpiry),
    commands,
    presence,
    endpoints.connections,
    feed,
    config.channel,
    log,
  );
  late.agentChannel = channel;
  commands.ready = (endpointId) => channel.commandReady(endpointId);
  const heartbeatStore = new HeartbeatStore(store);
  const network = new NetworkService(heartbeatStore, new NetworkHostStore(store), log, presence);
  const heartbeatRetention = new HeartbeatRetention(
    heartbeatStore,
    new LeaseStore(store),
    { ...retentionSchedule, retentionDays: config.heartbeatRetentionDays, rollover: config.maintenance.heartbeatRollover },
    log,
  );
  const auditRetention = new RolloverRetention(
    auditStore,
    new LeaseStore(store),
    { ...retentionSchedule, retentionDays: config.auditRetentionDays, rollover: config.maintenance.auditRollover },
    log,
    'audit-retention',
  );
  const jobs = createJobs({ config, store, log }, { endpoints, commands, modules, licenses, orgs }, retentionSchedule);
  // A revoked token's queued and running jobs are cancelled with it (docs/adr/0098-revoked-creator-cancels-jobs.md).
  tokens.onRevoked = async (tokenId) => {
    await jobs.service.cancelCreatedBy(tokenId);
  };
  const reports = new ReportService(endpoints);
  const orgAgentConfig = new OrgAgentConfigService(new OrgAgentConfigStore(store), orgs, () => presence.invalidate());
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
    idempotencyKeys: new IdempotencyKeyDocStore(store, log),
    changeWatcher,
    changeFeed: feed,
    changeRetention,
    heartbeatRetention,
    jobs,
    audit,
    auditRetention,
    presence,
    sessions,
    storeContext: store,
    agentChannel: channel,
    ancestry: new AncestryKeeper(store, new LeaseStore(store), { everyMs: config.maintenance.schemaCheckSeconds * 1000, holder: instanceName }, log),
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
    ...auditRoutes(s.audit),
    ...presenceRoutes(s.endpoints),
    ...agentChannelRoutes(s.agentChannel, s.endpoints),
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
