/**
 * The ordered list of schema migrations. The schema version of a database is the number of migrations applied.
 * Released migrations are never edited: a change to the schema is a new entry at the end.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The full-text index's update trigger, as schema 3 created it: schema 13 sets it aside while it renames libraries
 * (the text does not change) and creates it again, word for word.
 */
const SNIPPETS_FTS_UPDATE_TRIGGER = `CREATE TRIGGER snippets_fts_update AFTER UPDATE ON snippets BEGIN
        INSERT INTO snippets_fts (snippets_fts, rowid, title, description, content)
        VALUES ('delete', old.id, old.title, old.description, old.content);
        INSERT INTO snippets_fts (rowid, title, description, content)
        VALUES (new.id, new.title, new.description, new.content);
      END;`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts",
    sql: `
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      -- Every sealed secret (git tokens, S3 secret keys, OAuth tokens) lives here, so that one query tells
      -- whether secret.key is needed to read this database.
      CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        sealed TEXT NOT NULL,
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE TABLE teams (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL DEFAULT 'free' CHECK (plan IN ('free','pro','enterprise')),
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        email TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('owner','admin','member')),
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        prefix TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        name TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        revoked_at TEXT
      );
    `,
  },
  {
    version: 2,
    name: "libraries-snippets-jobs",
    sql: `
      CREATE TABLE libraries (
        id TEXT PRIMARY KEY,
        team_id INTEGER REFERENCES teams(id) ON DELETE SET NULL,
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL,
        source_url TEXT,
        private INTEGER NOT NULL DEFAULT 0,
        branches TEXT NOT NULL DEFAULT '[]',
        state TEXT NOT NULL DEFAULT 'queued'
          CHECK (state IN ('queued','fetching','parsing','embedding','finalized','failed')),
        state_reason TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE TABLE snippets (
        id INTEGER PRIMARY KEY,
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('code','info')),
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        language TEXT,
        content TEXT NOT NULL,
        source_path TEXT,
        tokens INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX snippets_by_library ON snippets(library_id);
      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('ingest','refresh')),
        state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done','failed')),
        payload TEXT NOT NULL DEFAULT '{}',
        error TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE INDEX jobs_by_state ON jobs(state);
    `,
  },
  {
    version: 3,
    name: "snippets-full-text",
    sql: `
      CREATE VIRTUAL TABLE snippets_fts USING fts5(
        title, description, content, content='snippets', content_rowid='id', tokenize='porter unicode61'
      );
      CREATE TRIGGER snippets_fts_insert AFTER INSERT ON snippets BEGIN
        INSERT INTO snippets_fts (rowid, title, description, content)
        VALUES (new.id, new.title, new.description, new.content);
      END;
      CREATE TRIGGER snippets_fts_delete AFTER DELETE ON snippets BEGIN
        INSERT INTO snippets_fts (snippets_fts, rowid, title, description, content)
        VALUES ('delete', old.id, old.title, old.description, old.content);
      END;
      ${SNIPPETS_FTS_UPDATE_TRIGGER}
      -- Index the snippets that databases of schema 2 already hold.
      INSERT INTO snippets_fts (snippets_fts) VALUES ('rebuild');
    `,
  },
  {
    version: 4,
    name: "admin-accounts-and-sessions",
    sql: `
      CREATE TABLE admins (
        id INTEGER PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      -- Only a hash of each session token is stored: a copy of the database (or a backup) opens no session.
      CREATE TABLE admin_sessions (
        token_hash TEXT PRIMARY KEY,
        admin_id INTEGER NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        expires_at TEXT NOT NULL
      );
      CREATE INDEX admin_sessions_by_expiry ON admin_sessions(expires_at);
    `,
  },
  {
    version: 5,
    name: "public-api-access",
    sql: `
      -- Keys are looked up by their public prefix, then the secret's hash is compared in constant time.
      CREATE UNIQUE INDEX api_keys_by_prefix ON api_keys(prefix);
      ALTER TABLE teams ADD COLUMN restrict_libraries INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE team_library_access (
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        library_id TEXT NOT NULL,
        PRIMARY KEY (team_id, library_id)
      );
      ALTER TABLE libraries ADD COLUMN owner_user_id INTEGER REFERENCES users(id) ON DELETE SET NULL;
      CREATE INDEX jobs_by_library ON jobs(library_id);
    `,
  },
  {
    version: 6,
    name: "connections-and-projects",
    sql: `
      -- An account connected to a source for a team; its token is sealed in secrets under secret_name.
      CREATE TABLE connections (
        id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('git','wiki')),
        -- wiki: the cloud id, the site URL clients name, and the API base the token is sent to.
        cloud_id TEXT,
        site_url TEXT,
        api_base TEXT,
        secret_name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        UNIQUE (team_id, kind, cloud_id)
      );
      CREATE TABLE team_projects (
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (team_id, project_id)
      );
    `,
  },
  {
    version: 7,
    name: "library-versions",
    sql: `
      -- A library's pinned versions (a tag or branch indexed apart from its current content, pinned by clients
      -- as /owner/repo/v1.2 or /owner/repo@v1.2). Snippets of the current content have version ''.
      ALTER TABLE snippets ADD COLUMN version TEXT NOT NULL DEFAULT '';
      DROP INDEX snippets_by_library;
      CREATE INDEX snippets_by_library_version ON snippets(library_id, version);
      CREATE TABLE library_versions (
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        ref TEXT NOT NULL,
        commit_sha TEXT,
        fetched_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (library_id, name)
      );
      -- A removed user keeps its row (libraries it owns, keys for the audit trail); its keys stop working.
      ALTER TABLE users ADD COLUMN removed_at TEXT;
    `,
  },
  {
    version: 8,
    name: "library-sources-connection-hosts-audit",
    sql: `
      -- A library's source, fixed when it is created: host and path, lower case, without scheme or ".git"
      -- (git), or the origin (wiki). A submission of the same id from another source is refused.
      ALTER TABLE libraries ADD COLUMN source_key TEXT;
      UPDATE libraries SET source_key = CASE
          WHEN source = 'git' AND source_url IS NOT NULL THEN
            rtrim(lower(CASE WHEN source_url LIKE '%.git' THEN substr(source_url, 1, length(source_url) - 4) ELSE source_url END), '/')
          ELSE lower(source_url) END;
      UPDATE libraries SET source_key = substr(source_key, instr(source_key, '://') + 3)
        WHERE source = 'git' AND instr(source_key, '://') > 0;
      CREATE INDEX libraries_by_source ON libraries(source_key);
      -- Git connections are pinned to the hosts their token may be sent to (JSON array of host[:port]).
      -- NULL (connections made by 0.3.0): the installation's default git host only.
      ALTER TABLE connections ADD COLUMN hosts TEXT;
      -- The title of the page a snippet comes from, where its path does not tell it (a wiki page's id).
      ALTER TABLE snippets ADD COLUMN page_title TEXT;
      -- Operator actions that change what clients are served (a library moved to a new source), for review.
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT NOT NULL,
        details TEXT NOT NULL DEFAULT '{}'
      );
    `,
  },
  {
    version: 9,
    name: "team-policies-usage",
    sql: `
      -- A team's access policy (JSON: {"sourceTypes": [...], "libraries": {"allow": [...] | null, "deny": [...]}});
      -- NULL allows everything. The allow-lists of 0.4 (restrict_libraries, team_library_access) become policies;
      -- that table and column are kept, unused, so that an older LDS can still read a restored copy.
      ALTER TABLE teams ADD COLUMN policy TEXT;
      UPDATE teams SET policy = json_object(
          'sourceTypes', json_array('git', 'wiki'),
          'libraries', json_object(
            'allow', (SELECT json_group_array(library_id) FROM team_library_access a WHERE a.team_id = teams.id),
            'deny', json_array()))
        WHERE restrict_libraries = 1;
      -- Requests per library and day, by dimension: the client kind ('client': api, mcp, cli), the query's topic
      -- words ('topic') and the MCP client's name ('mcpClient'). Kept 365 days.
      CREATE TABLE library_usage (
        library_id TEXT NOT NULL,
        day TEXT NOT NULL,
        dimension TEXT NOT NULL,
        name TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (library_id, day, dimension, name)
      ) WITHOUT ROWID;
      CREATE INDEX library_usage_by_day ON library_usage(day);
    `,
  },
  {
    version: 10,
    name: "oauth-connections",
    sql: `
      -- An account connected through OAuth (the dashboard's Connect): its access and refresh tokens sealed in
      -- secrets, when the access token expires, and whether the provider refused to refresh it ('revoked').
      CREATE TABLE oauth_grants (
        id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        provider TEXT NOT NULL,
        account TEXT NOT NULL,
        scopes TEXT NOT NULL DEFAULT '',
        expires_at TEXT,
        state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active','revoked')),
        problem TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      -- A connection made by OAuth names its grant; one made with a pasted token (lds connections add-*) does not.
      ALTER TABLE connections ADD COLUMN grant_id INTEGER REFERENCES oauth_grants(id) ON DELETE CASCADE;
      -- An authorization under way: the state's SHA-256 (the state itself goes only to the browser), its PKCE
      -- verifier, and where it came from. Taken once; stale after 10 minutes.
      CREATE TABLE oauth_states (
        state_hash TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        verifier TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        started_by TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 11,
    name: "snippet-batches",
    sql: `
      -- An ingestion writes its snippets as a new batch, in many small transactions that readers do not see, then
      -- publishes it by switching one row; the replaced batch is deleted afterwards, a chunk at a time. Readers
      -- serve the batch marked 'live' for a library version, or batch 0 when none is (rows from before batches).
      ALTER TABLE snippets ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
      -- Covers the counts and token sums of a library version (search results, the dashboard's list) too.
      CREATE INDEX snippets_by_batch ON snippets(library_id, version, batch, kind, tokens);
      -- Whose a snippet is, by id, without reading its text: a BM25 search checks this for every row that matches
      -- (tens of thousands in a large library), and the table's own pages are mostly text (20% faster searches).
      CREATE INDEX snippets_owner ON snippets(id, library_id, version, batch);
      DROP INDEX snippets_by_library_version;
      CREATE TABLE snippet_batches (
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        version TEXT NOT NULL,
        batch INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('writing','live','retired')),
        started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (library_id, version, batch)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX snippet_batches_live ON snippet_batches(library_id, version) WHERE state = 'live';
      CREATE INDEX snippet_batches_by_state ON snippet_batches(state);
      -- FTS5 merges its index segments inside the writing transaction by default, sometimes for half a second on a
      -- large index; writers now run bounded merge steps between their small transactions instead (tidyIndex).
      -- A crisis merge remains the safety net for writers that do not.
      INSERT INTO snippets_fts (snippets_fts, rank) VALUES ('automerge', 0);
      INSERT INTO snippets_fts (snippets_fts, rank) VALUES ('crisismerge', 64);
    `,
  },
  {
    version: 12,
    name: "batch-totals",
    sql: `
      -- A batch's snippet and token counts, added up as its chunks are written: search results and the dashboard
      -- read a library's totals from its live batch's row instead of counting its rows at every request (47 ms of
      -- the event loop for 1,000,000 snippets, from the covering index). NULL: not known (counted as before).
      ALTER TABLE snippet_batches ADD COLUMN snippets INTEGER;
      ALTER TABLE snippet_batches ADD COLUMN tokens INTEGER;
      UPDATE snippet_batches SET
        snippets = (SELECT count(*) FROM snippets s
                    WHERE s.library_id = snippet_batches.library_id AND s.version = snippet_batches.version AND s.batch = snippet_batches.batch),
        tokens = (SELECT coalesce(sum(tokens), 0) FROM snippets s
                  WHERE s.library_id = snippet_batches.library_id AND s.version = snippet_batches.version AND s.batch = snippet_batches.batch)
      WHERE state = 'live';
    `,
  },
  {
    version: 13,
    name: "private-library-namespace",
    sql: `
      -- Private libraries move to the reserved namespace /~team-<N>/... (src/util/library-id.ts): '~' is in no git
      -- path segment and no accepted host, so a public submission can no longer create an id of a team's form
      -- (/team-<N>/... was reachable by any repository under a group named team-<N> on the default host).
      -- Each rename is kept as a redirect: the owning team's clients asking for the old id get 301
      -- library_redirected with the new one. The vectors (vectors.db, partitioned by library id) follow when the
      -- volume is next opened: vectors_moved records that they did.
      CREATE TABLE library_redirects (
        old_id TEXT PRIMARY KEY,
        new_id TEXT NOT NULL,
        team_id INTEGER REFERENCES teams(id) ON DELETE CASCADE,
        vectors_moved INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
      );
      CREATE UNIQUE INDEX library_redirects_by_new_id ON library_redirects(new_id);
      -- /team-<N>/rest becomes /~team-<N>/rest; a 0.3.0 private id without a scope (/owner/repo) gets the prefix.
      -- Should two libraries of a team land on one new id (a 0.3.0 /a/b and a later /team-<N>/a/b from another
      -- host), the scoped one is renamed and the other keeps its id (OR IGNORE on the unique new id).
      INSERT OR IGNORE INTO library_redirects (old_id, new_id, team_id)
        SELECT id, '/~team-' || team_id || '/' ||
                 CASE WHEN substr(id, 1, length('/team-' || team_id || '/')) = '/team-' || team_id || '/'
                      THEN substr(id, length('/team-' || team_id || '/') + 1) ELSE substr(id, 2) END,
               team_id
        FROM libraries
        WHERE private = 1 AND team_id IS NOT NULL AND substr(id, 1, 2) <> '/~'
        ORDER BY substr(id, 1, length('/team-' || team_id || '/')) = '/team-' || team_id || '/' DESC, id;
      -- A private library whose team was removed (team_id NULL, visible to nobody) leaves the public namespace too.
      INSERT OR IGNORE INTO library_redirects (old_id, new_id, team_id)
        SELECT id, '/~' || substr(id, 2), NULL FROM libraries
        WHERE private = 1 AND team_id IS NULL AND id GLOB '/team-[0-9]*/*'
          AND substr(id, 7, instr(substr(id, 7), '/') - 1) NOT GLOB '*[^0-9]*';
      -- Children first, the libraries last, in one transaction: the foreign keys are checked at its end.
      PRAGMA defer_foreign_keys = ON;
      -- Only the id changes, not the text: the full-text index needs no update (its trigger is set aside meanwhile).
      DROP TRIGGER snippets_fts_update;
      UPDATE snippets SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = snippets.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      ${SNIPPETS_FTS_UPDATE_TRIGGER}
      UPDATE snippet_batches SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = snippet_batches.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      UPDATE library_versions SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = library_versions.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      UPDATE jobs SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = jobs.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      UPDATE library_usage SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = library_usage.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      UPDATE team_library_access SET library_id = (SELECT new_id FROM library_redirects WHERE old_id = team_library_access.library_id)
        WHERE library_id IN (SELECT old_id FROM library_redirects);
      UPDATE settings SET key = 'library.options:' || (SELECT new_id FROM library_redirects WHERE 'library.options:' || old_id = settings.key)
        WHERE key IN (SELECT 'library.options:' || old_id FROM library_redirects);
      UPDATE libraries SET id = (SELECT new_id FROM library_redirects WHERE old_id = libraries.id)
        WHERE id IN (SELECT old_id FROM library_redirects);
      -- A team's policy patterns follow its libraries: each pattern under /team-<N>/ and each naming a renamed id
      -- gains its /~team-<N>/ twin beside it. The originals stay: a deny of /team-2/x may be what kept a planted
      -- public library out, and replacing it would let that library in again.
      UPDATE teams SET policy = ${policyListFollowingRenames("deny")} WHERE json_type(policy, '$.libraries.deny') = 'array';
      UPDATE teams SET policy = ${policyListFollowingRenames("allow")} WHERE json_type(policy, '$.libraries.allow') = 'array';
      INSERT INTO audit_log (actor, action, subject, details)
        SELECT 'schema 13', 'library.rename', new_id, json_object('from', old_id, 'to', new_id) FROM library_redirects;
    `,
  },
  {
    version: 14,
    name: "job-leases",
    sql: `
      -- Job leases, so that several replicas on one shared database can run jobs: the runner that claimed a job
      -- holds it until lease_until (text in this file's timestamp format, renewed by its heartbeats); a job whose
      -- lease has passed belongs to a runner that died and is claimed again. attempts counts the claims, so a job
      -- that kills its runner every time is failed instead of claimed for ever. Jobs running at the upgrade have no
      -- owner and no lease: a sole server requeues them at its start, as before.
      ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
      ALTER TABLE jobs ADD COLUMN lease_until TEXT;
      ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    `,
  },
];

/**
 * Schema 13: a team's policy with one list (allow or deny) followed by the twins of its patterns in the new private
 * namespace (/team-<N>/… as /~team-<N>/…, a renamed 0.3 id as its new id), in the list's order, without duplicates.
 */
function policyListFollowingRenames(list: "allow" | "deny"): string {
  const path = `'$.libraries.${list}'`;
  const scope = "'/team-' || teams.id || '/'";
  return `json_set(policy, ${path}, (SELECT json_group_array(value) FROM (
        SELECT value, 0 AS pass, CAST(key AS INTEGER) AS position FROM json_each(teams.policy, ${path})
        UNION ALL
        SELECT twin, 1, min(position) FROM (
          SELECT CASE WHEN substr(j.value, 1, length(${scope})) = ${scope}
                      THEN '/~team-' || teams.id || '/' || substr(j.value, length(${scope}) + 1)
                      ELSE r.new_id END AS twin, CAST(j.key AS INTEGER) AS position
          FROM json_each(teams.policy, ${path}) j
          LEFT JOIN library_redirects r ON r.old_id = j.value AND r.team_id = teams.id)
        WHERE twin IS NOT NULL AND twin NOT IN (SELECT value FROM json_each(teams.policy, ${path}))
        GROUP BY twin
        ORDER BY pass, position)))`;
}

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
