import type Database from "better-sqlite3";
import * as accounts from "./accounts.js";
import * as admins from "./admins.js";
import * as apiKeys from "./api-keys.js";
import * as audit from "./audit.js";
import * as connections from "./connections.js";
import { createFirstTeam } from "./first-team.js";
import * as jobs from "./jobs.js";
import * as libraries from "./libraries.js";
import { libraryRedirect } from "./library-redirects.js";
import * as oauth from "./oauth.js";
import { turnsByKey } from "../../util/turns-by-key.js";
import { requestWindowsInMemory } from "../request-windows-in-memory.js";
import * as versions from "./library-versions.js";
import { schemaVersion } from "./schema-version.js";
import * as secrets from "./secrets-table.js";
import * as settings from "./settings.js";
import * as snippets from "./snippets.js";
import * as batches from "./snippet-batches.js";
import type { Store } from "../store.js";
import * as usage from "./usage.js";

/**
 * The SQLite engine of the store, over an open lds.db. better-sqlite3 runs each statement synchronously, so every
 * operation is complete (its transaction committed) when its Promise is created; the Promise is the contract's,
 * for engines that wait on a network. `key` seals and unseals the secrets that operations store.
 */
export function createSqliteStore(db: Database.Database, key: Buffer): Store {
  // One refresh of a grant's tokens at a time in this process (oauth.ts says why not a transaction).
  const grantRefreshTurns = turnsByKey<number>();
  // Each operation: the module's function with this database (and key) bound, its result as a Promise.
  const on =
    <A extends unknown[], R>(fn: (db: Database.Database, ...args: A) => R) =>
    async (...args: A): Promise<R> =>
      fn(db, ...args);
  const sealed =
    <A extends unknown[], R>(fn: (db: Database.Database, key: Buffer, ...args: A) => R) =>
    async (...args: A): Promise<R> =>
      fn(db, key, ...args);

  return {
    libraries: {
      find: on(libraries.findLibrary),
      list: on(libraries.listLibraries),
      bySource: on(libraries.librariesBySource),
      redirect: on(libraryRedirect),
      create: on(libraries.insertLibrary),
      createWithJob: sealed(libraries.createLibraryWithJob),
      queueJob: sealed(libraries.queueLibraryJob),
      relocate: sealed(libraries.relocateLibrary),
      options: on(libraries.libraryOptions),
      servedBranches: on(libraries.servedBranchRecords),
      recordServedBranch: on(libraries.recordServedBranch),
      setDescription: on(libraries.setLibraryDescription),
      setState: on(libraries.setLibraryState),
      remove: on(libraries.removeLibrary),
    },
    versions: {
      list: on(versions.libraryVersions),
      names: on(versions.versionNames),
      commit: on(versions.versionCommit),
      record: on(versions.recordVersion),
    },
    snippets: {
      count: on(snippets.countSnippets),
      totals: on(snippets.snippetTotals),
      countAll: on(snippets.countAllSnippets),
      load: on(snippets.loadSnippets),
      pages: (size) => asyncPages(snippets.snippetPages(db, size)),
      versions: on(batches.versionsWithRows),
      liveBatch: on(batches.liveBatch),
      openBatch: on(batches.openBatch),
      appendToBatch: on(batches.appendToBatch),
      publishBatch: on(batches.publishBatch),
      discardBatch: on(batches.discardBatch),
      retireUnfinishedAsSoleWriter: on(batches.retireUnfinishedAsSoleWriter),
      retireAbandonedBatches: on(batches.retireAbandonedBatches),
      retiredChunk: on(batches.retiredChunk),
      deleteRetiredRows: async (chunk) => batches.deleteRetiredRows(db, chunk.libraryId, chunk.version, chunk.batch, chunk.ids),
    },
    jobs: {
      enqueue: sealed(jobs.enqueueJob),
      claimNext: on(jobs.claimNextJob),
      renewLease: on(jobs.renewJobLease),
      giveBack: on(jobs.giveBackJob),
      hasQueued: on(jobs.hasQueuedJobs),
      hasPending: on(jobs.hasPendingJob),
      hasAnyPending: on(jobs.hasAnyPendingJob),
      token: sealed(jobs.jobToken),
      finish: on(jobs.finishJob),
      requeueRunningAsSoleProcess: on(jobs.requeueRunningJobsAsSoleProcess),
    },
    teams: {
      create: on(accounts.createTeam),
      find: on(accounts.findTeam),
      require: on(accounts.requireTeam),
      list: on(accounts.listTeams),
      setPlan: on(accounts.setTeamPlan),
      policy: on(accounts.teamPolicy),
      setPolicy: on(accounts.setTeamPolicy),
      addProject: on(connections.addTeamProject),
      hasProject: on(connections.teamHasProject),
      createFirst: on(createFirstTeam),
    },
    users: {
      add: on(accounts.addUser),
      require: on(accounts.requireUser),
      remove: on(accounts.removeUser),
      list: on(accounts.listUsers),
    },
    apiKeys: {
      create: on(apiKeys.createApiKey),
      authenticate: on(apiKeys.authenticate),
      hasActive: on(apiKeys.hasActiveApiKey),
      revoke: on(apiKeys.revokeApiKey),
      list: on(apiKeys.listApiKeys),
    },
    connections: {
      addWiki: sealed(connections.addWikiConnection),
      addGit: sealed(connections.addGitConnection),
      gitToken: sealed(connections.gitConnectionToken),
      findWiki: on(connections.findWikiConnection),
      wikiToken: sealed(connections.wikiToken),
      list: on(connections.listConnections),
      removePasted: on(connections.removePastedConnection),
    },
    oauth: {
      createState: on(oauth.createOAuthState),
      takeState: on(oauth.takeOAuthState),
      saveGrant: sealed(oauth.saveOAuthGrant),
      tokens: sealed(oauth.oauthGrantTokens),
      updateTokens: sealed(oauth.updateOAuthTokens),
      refreshTokens: (grantId, refresh) => oauth.refreshOAuthTokens(db, key, grantRefreshTurns, grantId, refresh),
      markRevoked: on(oauth.markOAuthGrantRevoked),
      remove: on(oauth.removeOAuthGrant),
      list: on(oauth.listOAuthGrants),
      find: on(oauth.findOAuthGrant),
    },
    admins: {
      find: on(admins.findAdmin),
      count: on(admins.countAdmins),
      create: on(admins.insertAdmin),
      createFirst: on(admins.insertFirstAdmin),
      createSession: on(admins.createSession),
      sessionAdmin: on(admins.sessionAdmin),
      deleteSession: on(admins.deleteSession),
    },
    settings: {
      get: on(settings.getSetting),
      set: on(settings.setSetting),
      putIfAbsent: on(settings.putSettingIfAbsent),
      pruneBefore: on(settings.pruneSettingsBefore),
      secret: sealed(secrets.getSecret),
      hasSecret: on(secrets.hasSecret),
      saveWithSecrets: sealed(secrets.saveSettingWithSecrets),
      resealSecrets: sealed(secrets.resealSecrets),
    },
    audit: {
      record: on(audit.recordAudit),
      list: on(audit.listAudit),
    },
    usage: {
      add: on(usage.addUsage),
      read: on(usage.readUsage),
      prune: on(usage.pruneUsage),
    },
    // One server process per SQLite volume: its windows in memory, not a write in lds.db per request.
    requestWindows: requestWindowsInMemory(),
    schemaVersion: on(schemaVersion),
  };
}

/** A page generator as an async iterable (pages are read one at a time, as the consumer asks). */
async function* asyncPages<T>(pages: Generator<T>): AsyncIterable<T> {
  yield* pages;
}
