/**
 * The triggers of migration 22 (webhooks), one set per engine, and those of migration 25 that replace
 * PostgreSQL's print-job trigger: part of released migrations, never edited (a change is a new migration that
 * drops and recreates them).
 *
 * - print_jobs: a job created, or its status changed, is `print_job.<status>`, with a snapshot of the columns a
 *   lifecycle change writes.
 * - printers and agents: a printer is online while it is reported, not removed and its hub is online
 *   (printers.ts, `onlineWithHub`); a change of any of the three that changes that is `printer.online` or
 *   `printer.offline`; a change of its health's state or reasons is `printer.health_changed`; a hub's is
 *   `agent.online` or `agent.offline`.
 * - webhook_events: each event gets one pending delivery, due now, per enabled endpoint of its account that
 *   subscribes to its type.
 *
 * Every event trigger writes only when such an endpoint exists, so an account without webhooks pays one
 * indexed lookup per change.
 */

/** A job's columns a lifecycle change writes: what a `print_job.*` event keeps of the job at the change. */
export const JOB_SNAPSHOT_FIELDS = [
  'status',
  'reserved_at',
  'started_at',
  'completed_at',
  'failure_reason',
  'failure_detail',
  'waiting_reason',
] as const

// SQLite: the time of the statement (the same for all of it), as the cloud writes times, and in epoch ms.
const SQLITE_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
const SQLITE_NOW_MS = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)"
// RFC 9562 §5.4 (version 4): the version nibble 4, the variant bits 10.
const SQLITE_UUID =
  "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || " +
  "substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))"

const sqliteSubscribed = (account: string, type: string) => `EXISTS (
          SELECT 1 FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.endpoint_id = s.endpoint_id
          WHERE s.account_id = ${account} AND s.event_type = ${type} AND e.enabled = 1)`

const sqliteEvent = (account: string, type: string, subject: string, snapshot: string) => `
        INSERT INTO webhook_events (event_id, account_id, type, subject_id, occurred_at, snapshot)
        SELECT ${SQLITE_UUID}, ${account}, ${type}, ${subject}, ${SQLITE_NOW}, ${snapshot}
        WHERE ${sqliteSubscribed(account, type)};`

const sqlitePrinterOnline = (row: 'OLD' | 'NEW') =>
  `(${row}.reported = 1 AND ${row}.removed_at IS NULL AND ` +
  `(SELECT online FROM agents WHERE agent_id = ${row}.agent_id) = 1)`

const sqlitePrinterSnapshot = (online: string, health: string) =>
  `json_object('online', json(CASE WHEN ${online} THEN 'true' ELSE 'false' END), 'health', json(${health}))`

export function sqliteWebhookTriggers(): string {
  const jobType = "'print_job.' || NEW.status"
  const jobSnapshot = `json_object(${JOB_SNAPSHOT_FIELDS.map((f) => `'${f}', NEW.${f}`).join(', ')})`
  const jobEvent = sqliteEvent('NEW.account_id', jobType, 'NEW.print_job_id', jobSnapshot)
  const printerType = `CASE WHEN ${sqlitePrinterOnline('NEW')} THEN 'printer.online' ELSE 'printer.offline' END`
  const agentType = "CASE WHEN NEW.online = 1 THEN 'agent.online' ELSE 'agent.offline' END"
  const printersOfAgentType = "CASE WHEN NEW.online = 1 THEN 'printer.online' ELSE 'printer.offline' END"
  return `
      CREATE TRIGGER webhook_print_job_created AFTER INSERT ON print_jobs
      BEGIN${jobEvent}
      END;
      CREATE TRIGGER webhook_print_job_status AFTER UPDATE OF status ON print_jobs
      WHEN OLD.status <> NEW.status
      BEGIN${jobEvent}
      END;
      CREATE TRIGGER webhook_printer_added AFTER INSERT ON printers
      WHEN ${sqlitePrinterOnline('NEW')}
      BEGIN${sqliteEvent('NEW.account_id', "'printer.online'", 'NEW.printer_id', sqlitePrinterSnapshot('1', 'NEW.health'))}
      END;
      CREATE TRIGGER webhook_printer_presence AFTER UPDATE OF reported, removed_at ON printers
      WHEN ${sqlitePrinterOnline('OLD')} IS NOT ${sqlitePrinterOnline('NEW')}
      BEGIN${sqliteEvent('NEW.account_id', printerType, 'NEW.printer_id', sqlitePrinterSnapshot(sqlitePrinterOnline('NEW'), 'NEW.health'))}
      END;
      CREATE TRIGGER webhook_printer_health AFTER UPDATE OF health ON printers
      WHEN json_extract(OLD.health, '$.state') IS NOT json_extract(NEW.health, '$.state')
        OR json_extract(OLD.health, '$.reasons') IS NOT json_extract(NEW.health, '$.reasons')
      BEGIN${sqliteEvent('NEW.account_id', "'printer.health_changed'", 'NEW.printer_id', sqlitePrinterSnapshot(sqlitePrinterOnline('NEW'), 'NEW.health'))}
      END;
      CREATE TRIGGER webhook_agent_presence AFTER UPDATE OF online ON agents
      WHEN OLD.online <> NEW.online
      BEGIN${sqliteEvent(
        'NEW.account_id',
        agentType,
        'NEW.agent_id',
        "json_object('online', json(CASE WHEN NEW.online = 1 THEN 'true' ELSE 'false' END), 'last_seen_at', NEW.last_seen_at, 'version', NEW.version)",
      )}
        INSERT INTO webhook_events (event_id, account_id, type, subject_id, occurred_at, snapshot)
        SELECT ${SQLITE_UUID}, p.account_id, ${printersOfAgentType}, p.printer_id, ${SQLITE_NOW},
          ${sqlitePrinterSnapshot('NEW.online = 1', 'p.health')}
        FROM printers p
        WHERE p.agent_id = NEW.agent_id AND p.reported = 1 AND p.removed_at IS NULL
          AND ${sqliteSubscribed('p.account_id', printersOfAgentType)};
      END;
      CREATE TRIGGER webhook_event_deliveries AFTER INSERT ON webhook_events
      BEGIN
        INSERT INTO webhook_deliveries
          (delivery_id, event_id, endpoint_id, account_id, state, attempts, next_attempt_at, created_at, created_at_ms)
        SELECT ${SQLITE_UUID}, NEW.event_id, s.endpoint_id, NEW.account_id, 'pending', 0, ${SQLITE_NOW_MS},
          ${SQLITE_NOW}, ${SQLITE_NOW_MS}
        FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.endpoint_id = s.endpoint_id
        WHERE s.account_id = NEW.account_id AND s.event_type = NEW.type AND e.enabled = 1;
      END;
    `
}

// PostgreSQL: the wall clock at the change (clock_timestamp, not the transaction's start), as the cloud
// writes times, and in epoch ms; gen_random_uuid is built in from PostgreSQL 13.
const PG_NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const PG_NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

const pgSubscribed = (account: string, type: string) => `EXISTS (
            SELECT 1 FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.endpoint_id = s.endpoint_id
            WHERE s.account_id = ${account} AND s.event_type = ${type} AND e.enabled = 1)`

const pgEvent = (account: string, type: string, subject: string, snapshot: string) => `
          INSERT INTO webhook_events (event_id, account_id, type, subject_id, occurred_at, snapshot)
          SELECT gen_random_uuid()::text, ${account}, ${type}, ${subject}, ${PG_NOW}, (${snapshot})::text
          WHERE ${pgSubscribed(account, type)};`

const pgPrinterOnline = (row: 'OLD' | 'NEW') =>
  `(${row}.reported = 1 AND ${row}.removed_at IS NULL AND ` +
  `COALESCE((SELECT online FROM agents WHERE agent_id = ${row}.agent_id), 0) = 1)`

const pgPrinterSnapshot = (online: string, health: string) =>
  `json_build_object('online', ${online}, 'health', (${health})::json)`

const pgFunction = (name: string, body: string) => `
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN${body}
        RETURN NULL;
      END $$;`

export function postgresWebhookTriggers(): string {
  const jobType = "'print_job.' || NEW.status"
  const jobSnapshot = `json_build_object(${JOB_SNAPSHOT_FIELDS.map((f) => `'${f}', NEW.${f}`).join(', ')})`
  const printerType = `CASE WHEN ${pgPrinterOnline('NEW')} THEN 'printer.online' ELSE 'printer.offline' END`
  const agentType = "CASE WHEN NEW.online = 1 THEN 'agent.online' ELSE 'agent.offline' END"
  const printersOfAgentType = "CASE WHEN NEW.online = 1 THEN 'printer.online' ELSE 'printer.offline' END"
  return `${pgFunction(
    'webhook_print_job_event',
    `
        IF TG_OP = 'UPDATE' AND OLD.status = NEW.status THEN RETURN NULL; END IF;${pgEvent('NEW.account_id', jobType, 'NEW.print_job_id', jobSnapshot)}`,
  )}
      CREATE TRIGGER webhook_print_job_event AFTER INSERT OR UPDATE OF status ON print_jobs
        FOR EACH ROW EXECUTE FUNCTION webhook_print_job_event();
${pgFunction(
  'webhook_printer_event',
  `
        IF TG_OP = 'INSERT' THEN
          IF ${pgPrinterOnline('NEW')} THEN${pgEvent('NEW.account_id', "'printer.online'", 'NEW.printer_id', pgPrinterSnapshot('true', 'NEW.health'))}
          END IF;
          RETURN NULL;
        END IF;
        IF ${pgPrinterOnline('OLD')} IS DISTINCT FROM ${pgPrinterOnline('NEW')} THEN${pgEvent('NEW.account_id', printerType, 'NEW.printer_id', pgPrinterSnapshot(pgPrinterOnline('NEW'), 'NEW.health'))}
        END IF;
        IF (OLD.health::jsonb -> 'state') IS DISTINCT FROM (NEW.health::jsonb -> 'state')
          OR (OLD.health::jsonb -> 'reasons') IS DISTINCT FROM (NEW.health::jsonb -> 'reasons') THEN${pgEvent('NEW.account_id', "'printer.health_changed'", 'NEW.printer_id', pgPrinterSnapshot(pgPrinterOnline('NEW'), 'NEW.health'))}
        END IF;`,
)}
      CREATE TRIGGER webhook_printer_event AFTER INSERT OR UPDATE OF reported, removed_at, health ON printers
        FOR EACH ROW EXECUTE FUNCTION webhook_printer_event();
${pgFunction(
  'webhook_agent_event',
  `
        IF OLD.online = NEW.online THEN RETURN NULL; END IF;${pgEvent(
          'NEW.account_id',
          agentType,
          'NEW.agent_id',
          "json_build_object('online', NEW.online = 1, 'last_seen_at', NEW.last_seen_at, 'version', NEW.version)",
        )}
          INSERT INTO webhook_events (event_id, account_id, type, subject_id, occurred_at, snapshot)
          SELECT gen_random_uuid()::text, p.account_id, ${printersOfAgentType}, p.printer_id, ${PG_NOW},
            (${pgPrinterSnapshot('NEW.online = 1', 'p.health')})::text
          FROM printers p
          WHERE p.agent_id = NEW.agent_id AND p.reported = 1 AND p.removed_at IS NULL
            AND ${pgSubscribed('p.account_id', printersOfAgentType)};`,
)}
      CREATE TRIGGER webhook_agent_event AFTER UPDATE OF online ON agents
        FOR EACH ROW EXECUTE FUNCTION webhook_agent_event();
${pgFunction(
  'webhook_event_deliveries',
  `
        INSERT INTO webhook_deliveries
          (delivery_id, event_id, endpoint_id, account_id, state, attempts, next_attempt_at, created_at, created_at_ms)
        SELECT gen_random_uuid()::text, NEW.event_id, s.endpoint_id, NEW.account_id, 'pending', 0, ${PG_NOW_MS},
          ${PG_NOW}, ${PG_NOW_MS}
        FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.endpoint_id = s.endpoint_id
        WHERE s.account_id = NEW.account_id AND s.event_type = NEW.type AND e.enabled = 1;`,
)}
      CREATE TRIGGER webhook_event_deliveries AFTER INSERT ON webhook_events
        FOR EACH ROW EXECUTE FUNCTION webhook_event_deliveries();
    `
}

/**
 * Migration 25, PostgreSQL: a print job's events and their deliveries are written once per statement, from
 * its transition tables, not by a trigger per row and a second per event. The lifecycle's UPDATEs and the
 * intake's INSERTs carry a dozen jobs each under load, and per-row triggers cost as much as the jobs' own row
 * writes: 108 against 92 µs of PostgreSQL's CPU per job with no endpoint, 223 against 177 µs with one
 * endpoint taking each status (test/bench/job-event-triggers.ts; docs/performance.md, "Webhook deliveries").
 * A statement whose jobs' accounts subscribe to none of their statuses stops at the first query. Events of
 * printers and hubs keep their per-row triggers, and get their deliveries from webhook_event_deliveries as
 * before.
 */
export function postgresJobEventStatementTriggers(): string {
  const jobType = "'print_job.' || c.status"
  const snapshot = `json_build_object(${JOB_SNAPSHOT_FIELDS.map((f) => `'${f}', c.${f}`).join(', ')})`
  const write = (changed: string) => `
        IF NOT EXISTS (
          SELECT 1 FROM new_rows n JOIN webhook_subscriptions s
            ON s.account_id = n.account_id AND s.event_type = 'print_job.' || n.status) THEN
          RETURN NULL;
        END IF;
        WITH c AS (${changed}),
        events AS (
          INSERT INTO webhook_events (event_id, account_id, type, subject_id, occurred_at, snapshot)
          SELECT gen_random_uuid()::text, c.account_id, ${jobType}, c.print_job_id, ${PG_NOW}, (${snapshot})::text
          FROM c
          WHERE ${pgSubscribed('c.account_id', jobType)}
          RETURNING event_id, account_id, type, occurred_at
        )
        INSERT INTO webhook_deliveries
          (delivery_id, event_id, endpoint_id, account_id, state, attempts, next_attempt_at, created_at, created_at_ms)
        SELECT gen_random_uuid()::text, v.event_id, s.endpoint_id, v.account_id, 'pending', 0, ${PG_NOW_MS},
          v.occurred_at, ${PG_NOW_MS}
        FROM events v
          JOIN webhook_subscriptions s ON s.account_id = v.account_id AND s.event_type = v.type
          JOIN webhook_endpoints e ON e.endpoint_id = s.endpoint_id
        WHERE e.enabled = 1;`
  return `
      DROP TRIGGER webhook_print_job_event ON print_jobs;
      DROP FUNCTION webhook_print_job_event();
${pgFunction('webhook_print_jobs_inserted', write('SELECT * FROM new_rows'))}
      CREATE TRIGGER webhook_print_jobs_inserted AFTER INSERT ON print_jobs
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION webhook_print_jobs_inserted();
${pgFunction(
  'webhook_print_jobs_updated',
  write('SELECT n.* FROM new_rows n JOIN old_rows o ON o.seq = n.seq WHERE o.status <> n.status'),
)}
      CREATE TRIGGER webhook_print_jobs_updated AFTER UPDATE ON print_jobs
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION webhook_print_jobs_updated();
      DROP TRIGGER webhook_event_deliveries ON webhook_events;
      CREATE TRIGGER webhook_event_deliveries AFTER INSERT ON webhook_events
        FOR EACH ROW WHEN (NOT starts_with(NEW.type, 'print_job.'))
        EXECUTE FUNCTION webhook_event_deliveries();
    `
}
