/**
 * Versioned schema migrations. `PRAGMA user_version` holds the version a database is at; opening it applies
 * every later migration in order, each in its own transaction, so an older database is upgraded in place.
 * Append new migrations; never edit a released one.
 */
export interface Migration {
  version: number
  name: string
  sql: string
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and API clients',
    sql: `
      CREATE TABLE accounts (
        account_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_clients (
        client_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        secret_hash BLOB NOT NULL,
        scopes TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE access_tokens (
        token_hash BLOB PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES api_clients(client_id),
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        scopes TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX access_tokens_by_expiry ON access_tokens(expires_at);
    `,
  },
  {
    version: 2,
    name: 'agents, printers, documents and print jobs',
    sql: `
      CREATE TABLE agents (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        name TEXT NOT NULL,
        online INTEGER NOT NULL DEFAULT 0,
        last_seen_at TEXT,
        version TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX agents_by_account ON agents(account_id, seq);
      CREATE TABLE printers (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        printer_id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        agent_id TEXT NOT NULL REFERENCES agents(agent_id),
        name TEXT NOT NULL,
        capabilities TEXT NOT NULL,
        online INTEGER NOT NULL DEFAULT 0,
        last_seen_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX printers_by_account ON printers(account_id, seq);
      CREATE TABLE documents (
        document_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        mime_type TEXT NOT NULL,
        format TEXT NOT NULL,
        raw_language TEXT,
        size_bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        filename TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE print_jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        print_job_id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        document_id TEXT NOT NULL REFERENCES documents(document_id),
        printer_id TEXT NOT NULL REFERENCES printers(printer_id),
        status TEXT NOT NULL,
        options TEXT NOT NULL,
        created_at TEXT NOT NULL,
        reserved_at TEXT,
        started_at TEXT,
        completed_at TEXT,
        failure_reason TEXT
      );
      CREATE INDEX print_jobs_by_account ON print_jobs(account_id, seq);
      CREATE INDEX print_jobs_by_account_status ON print_jobs(account_id, status, seq);
      CREATE INDEX print_jobs_by_account_printer ON print_jobs(account_id, printer_id, seq);
    `,
  },
  {
    version: 3,
    name: 'idempotency keys',
    sql: `
      CREATE TABLE idempotency_keys (
        account_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL,
        status_code INTEGER,
        response_body TEXT,
        locked_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, endpoint, key)
      );
      CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    version: 4,
    name: 'hub enrollment, hub credentials, printers reported by hubs',
    sql: `
      CREATE TABLE enrollments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        enrollment_id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        name TEXT NOT NULL,
        token_hash BLOB NOT NULL UNIQUE,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        claimed_at TEXT,
        revoked_at TEXT,
        agent_id TEXT REFERENCES agents(agent_id)
      );
      CREATE INDEX enrollments_by_account ON enrollments(account_id, seq);
      ALTER TABLE agents ADD COLUMN credential_hash BLOB;
      ALTER TABLE agents ADD COLUMN hostname TEXT;
      ALTER TABLE agents ADD COLUMN session_id TEXT;
      CREATE UNIQUE INDEX agents_by_credential ON agents(credential_hash) WHERE credential_hash IS NOT NULL;
      ALTER TABLE printers ADD COLUMN printer_key TEXT;
      ALTER TABLE printers ADD COLUMN uri TEXT;
      ALTER TABLE printers ADD COLUMN health TEXT;
      CREATE INDEX printers_by_agent ON printers(agent_id);
      CREATE INDEX print_jobs_by_status_created ON print_jobs(status, created_at);
      CREATE INDEX print_jobs_by_printer_status ON print_jobs(printer_id, status, seq);
    `,
  },
  {
    version: 5,
    name: 'job offers and cancel requests',
    sql: `
      ALTER TABLE print_jobs ADD COLUMN offered_at TEXT;
      ALTER TABLE print_jobs ADD COLUMN cancel_requested_at TEXT;
      ALTER TABLE print_jobs ADD COLUMN cancel_reason TEXT;
    `,
  },
  {
    version: 6,
    name: 'document retention and storage quotas',
    sql: `
      -- A purged document keeps its row (finished jobs still name it); only its bytes are gone.
      ALTER TABLE documents ADD COLUMN purged_at TEXT;
      CREATE INDEX documents_retained_by_created ON documents(created_at) WHERE purged_at IS NULL;
      CREATE INDEX documents_retained_by_sha256 ON documents(sha256) WHERE purged_at IS NULL;
      CREATE INDEX print_jobs_by_document ON print_jobs(document_id, status);
      -- Bytes of each account's documents not yet purged, kept by the documents repository.
      CREATE TABLE account_storage (
        account_id TEXT PRIMARY KEY REFERENCES accounts(account_id),
        retained_bytes INTEGER NOT NULL
      );
      INSERT INTO account_storage (account_id, retained_bytes)
        SELECT account_id, sum(size_bytes) FROM documents GROUP BY account_id;
      -- Blob files no retained document names any more, deleted after the rows by housekeeping.
      CREATE TABLE blob_deletions (
        sha256 TEXT PRIMARY KEY,
        queued_at TEXT NOT NULL
      );
      -- A job created at the moment its document is purged fails here, in the same write, not at print time.
      CREATE TRIGGER print_jobs_need_retained_document BEFORE INSERT ON print_jobs
        WHEN EXISTS (SELECT 1 FROM documents WHERE document_id = NEW.document_id AND purged_at IS NOT NULL)
        BEGIN SELECT RAISE(ABORT, 'document_purged'); END;
    `,
  },
  {
    version: 7,
    name: 'revoked API clients and hubs',
    sql: `
      ALTER TABLE api_clients ADD COLUMN revoked_at TEXT;
      ALTER TABLE agents ADD COLUMN revoked_at TEXT;
      CREATE INDEX agents_by_revocation ON agents(revoked_at) WHERE revoked_at IS NOT NULL;
    `,
  },
  {
    version: 8,
    name: 'why a job waits',
    sql: 'ALTER TABLE print_jobs ADD COLUMN waiting_reason TEXT;',
  },
  {
    version: 9,
    name: 'removed printers',
    // A removed printer keeps its row (its jobs still name it) until its hub reports it again.
    sql: 'ALTER TABLE printers ADD COLUMN removed_at TEXT;',
  },
  {
    version: 10,
    name: 'why a job failed, in words',
    sql: 'ALTER TABLE print_jobs ADD COLUMN failure_detail TEXT;',
  },
]
