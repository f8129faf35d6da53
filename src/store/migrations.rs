//! The schema's migrations, one list for both backends: each step has its
//! SQLite and its PostgreSQL text, applied in order. SQLite records how
//! many ran in `PRAGMA user_version`; PostgreSQL in the memory schema's
//! `meta` row `schema_version`. Where a step only repaired SQLite's own
//! history, its PostgreSQL text does nothing (a PostgreSQL memory starts
//! from the repaired form).

/// One step of the schema. In the PostgreSQL text, `@schema@` stands for
/// the memory's schema (quoted), for names a function must find whatever
/// the calling session's `search_path`.
pub struct Migration {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// Migrations, applied in order.
pub const MIGRATIONS: &[Migration] = &[
    // 1: the graph
    Migration {
        sqlite: r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    INSERT INTO meta(key, value) VALUES ('next_id', '1');
    CREATE TABLE concepts (
        id          INTEGER PRIMARY KEY,
        type        TEXT NOT NULL,
        name        TEXT NOT NULL,
        attributes  TEXT NOT NULL DEFAULT '{}',
        metadata    TEXT NOT NULL DEFAULT '{}',
        version     INTEGER NOT NULL DEFAULT 1,
        updated_at  TEXT NOT NULL
    );
    CREATE UNIQUE INDEX concepts_type_name ON concepts(type, name);
    CREATE INDEX concepts_name ON concepts(name);
    CREATE TABLE propositions (
        id          INTEGER PRIMARY KEY,
        subject     INTEGER NOT NULL,
        predicate   TEXT NOT NULL,
        object      INTEGER NOT NULL,
        attributes  TEXT NOT NULL DEFAULT '{}',
        metadata    TEXT NOT NULL DEFAULT '{}',
        version     INTEGER NOT NULL DEFAULT 1,
        updated_at  TEXT NOT NULL
    );
    CREATE UNIQUE INDEX propositions_spo ON propositions(subject, predicate, object);
    CREATE INDEX propositions_op ON propositions(object, predicate);
    CREATE INDEX propositions_p ON propositions(predicate);
    "#,
        postgres: r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    -- concepts and propositions share one id sequence, never reused
    CREATE SEQUENCE element_ids;
    CREATE TABLE concepts (
        id          BIGINT PRIMARY KEY,
        type        TEXT NOT NULL,
        name        TEXT NOT NULL,
        attributes  JSONB NOT NULL DEFAULT '{}',
        metadata    JSONB NOT NULL DEFAULT '{}',
        version     BIGINT NOT NULL DEFAULT 1,
        updated_at  TEXT NOT NULL
    );
    CREATE UNIQUE INDEX concepts_type_name ON concepts(type, name);
    CREATE INDEX concepts_name ON concepts(name);
    CREATE TABLE propositions (
        id          BIGINT PRIMARY KEY,
        subject     BIGINT NOT NULL,
        predicate   TEXT NOT NULL,
        object      BIGINT NOT NULL,
        attributes  JSONB NOT NULL DEFAULT '{}',
        metadata    JSONB NOT NULL DEFAULT '{}',
        version     BIGINT NOT NULL DEFAULT 1,
        updated_at  TEXT NOT NULL
    );
    CREATE UNIQUE INDEX propositions_spo ON propositions(subject, predicate, object);
    CREATE INDEX propositions_op ON propositions(object, predicate);
    CREATE INDEX propositions_p ON propositions(predicate);
    "#,
    },
    // 2: full-text grounding index over name, aliases, description and the
    //    salient text attributes, kept in sync by triggers
    Migration {
        sqlite: r#"
    CREATE VIRTUAL TABLE concept_fts USING fts5(
        name, aliases, description, body,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER concepts_fts_ai AFTER INSERT ON concepts BEGIN
        INSERT INTO concept_fts(rowid, name, aliases, description, body) VALUES (
            new.id, new.name,
            (SELECT group_concat(value, ' ') FROM json_each(new.attributes, '$.aliases')),
            json_extract(new.attributes, '$.description'),
            concat_ws(' ', json_extract(new.attributes, '$.content_summary'), json_extract(new.attributes, '$.summary'),
                      json_extract(new.attributes, '$.title'), json_extract(new.attributes, '$.content'))
        );
    END;
    CREATE TRIGGER concepts_fts_ad AFTER DELETE ON concepts BEGIN
        DELETE FROM concept_fts WHERE rowid = old.id;
    END;
    CREATE TRIGGER concepts_fts_au AFTER UPDATE OF name, attributes ON concepts BEGIN
        DELETE FROM concept_fts WHERE rowid = old.id;
        INSERT INTO concept_fts(rowid, name, aliases, description, body) VALUES (
            new.id, new.name,
            (SELECT group_concat(value, ' ') FROM json_each(new.attributes, '$.aliases')),
            json_extract(new.attributes, '$.description'),
            concat_ws(' ', json_extract(new.attributes, '$.content_summary'), json_extract(new.attributes, '$.summary'),
                      json_extract(new.attributes, '$.title'), json_extract(new.attributes, '$.content'))
        );
    END;
    INSERT INTO concept_fts(rowid, name, aliases, description, body)
        SELECT id, name,
            (SELECT group_concat(value, ' ') FROM json_each(attributes, '$.aliases')),
            json_extract(attributes, '$.description'),
            concat_ws(' ', json_extract(attributes, '$.content_summary'), json_extract(attributes, '$.summary'),
                      json_extract(attributes, '$.title'), json_extract(attributes, '$.content'))
        FROM concepts;
    "#,
        postgres: r#"
    -- PostgreSQL's own full-text machinery: a weighted document kept by
    -- the row itself (name and aliases A, description B, the salient text
    -- attributes C), indexed with GIN; 'simple' keeps every word of every
    -- language (no stemming, no stop words), as the SQLite tokenizer does
    ALTER TABLE concepts ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, name), 'A')
        || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes -> 'aliases', '[]'::jsonb)), 'A')
        || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes ->> 'description', '')), 'B')
        || setweight(to_tsvector('simple'::regconfig,
               COALESCE(attributes ->> 'content_summary', '') || ' ' || COALESCE(attributes ->> 'summary', '') || ' '
               || COALESCE(attributes ->> 'title', '') || ' ' || COALESCE(attributes ->> 'content', '')), 'C')
    ) STORED;
    CREATE INDEX concepts_search ON concepts USING GIN (search);
    "#,
    },
    // 3: embeddings for semantic SEARCH, and the queue of concepts whose
    //    grounding text changed since they were embedded (new concepts are
    //    found by id when embedding runs, so inserts pay nothing here)
    Migration {
        sqlite: r#"
    CREATE TABLE embeddings (
        id      INTEGER PRIMARY KEY,
        model   TEXT NOT NULL,
        vector  BLOB NOT NULL
    );
    CREATE TABLE embed_queue (id INTEGER PRIMARY KEY);
    INSERT INTO meta(key, value) VALUES ('embed_scanned_to', '0');
    CREATE TRIGGER concepts_embed_au AFTER UPDATE OF name, attributes ON concepts BEGIN
        INSERT OR IGNORE INTO embed_queue(id) VALUES (new.id);
    END;
    CREATE TRIGGER concepts_embed_ad AFTER DELETE ON concepts BEGIN
        DELETE FROM embeddings WHERE id = old.id;
        DELETE FROM embed_queue WHERE id = old.id;
    END;
    "#,
        postgres: r#"
    CREATE TABLE embeddings (
        id      BIGINT PRIMARY KEY,
        model   TEXT NOT NULL,
        vector  BYTEA NOT NULL
    );
    CREATE TABLE embed_queue (id BIGINT PRIMARY KEY);
    INSERT INTO meta(key, value) VALUES ('embed_scanned_to', '0');
    CREATE FUNCTION concepts_embed() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM embeddings WHERE id = OLD.id;
            DELETE FROM embed_queue WHERE id = OLD.id;
        ELSIF OLD.name IS DISTINCT FROM NEW.name OR OLD.attributes IS DISTINCT FROM NEW.attributes THEN
            INSERT INTO embed_queue(id) VALUES (NEW.id) ON CONFLICT (id) DO NOTHING;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER concepts_embed AFTER UPDATE OF name, attributes OR DELETE ON concepts
        FOR EACH ROW EXECUTE FUNCTION concepts_embed();
    "#,
    },
    // 4: the console's query history, kept with the memory it ran on
    Migration {
        sqlite: r#"
    CREATE TABLE console_history (
        id          INTEGER PRIMARY KEY,
        at          TEXT NOT NULL,
        command     TEXT NOT NULL,
        parameters  TEXT NOT NULL DEFAULT '{}'
    );
    "#,
        postgres: r#"
    CREATE TABLE console_history (
        id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        at          TEXT NOT NULL,
        command     TEXT NOT NULL,
        parameters  TEXT NOT NULL DEFAULT '{}'
    );
    "#,
    },
    // 5: the audit trail: who changed what, why, and the before/after image
    //    of every element touched (written by triggers, so no write path
    //    can skip it). New elements are the id range an entry allocated
    //    (ids only grow), so inserts cost no audit row; only elements
    //    re-inserted by a rollback are recorded one by one.
    Migration {
        sqlite: r#"
    CREATE TABLE audit_log (
        id              INTEGER PRIMARY KEY,
        at              TEXT NOT NULL,
        actor           TEXT NOT NULL,
        trigger_name    TEXT NOT NULL,
        reason          TEXT,
        command         TEXT NOT NULL,
        kind            TEXT NOT NULL,
        rolls_back      INTEGER,
        rolled_back_by  INTEGER,
        first_change    INTEGER NOT NULL DEFAULT 0,
        n_changes       INTEGER NOT NULL DEFAULT 0,
        first_id        INTEGER NOT NULL DEFAULT 0,
        end_id          INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX audit_log_ids ON audit_log(first_id);
    CREATE INDEX audit_log_actor ON audit_log(actor, id);
    CREATE TABLE audit_changes (
        id       INTEGER PRIMARY KEY,
        entry    INTEGER NOT NULL,
        element  INTEGER NOT NULL,
        tbl      TEXT NOT NULL,
        op       TEXT NOT NULL,
        before   TEXT,
        after    TEXT
    );
    CREATE INDEX audit_changes_element ON audit_changes(element, entry);
    CREATE TRIGGER audit_concepts_insert AFTER INSERT ON concepts WHEN somnus_audit_entry() IS NOT NULL AND new.id < somnus_audit_first_id() BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), new.id, 'concepts', 'insert', NULL, NULL);
    END;
    CREATE TRIGGER audit_concepts_update AFTER UPDATE ON concepts WHEN somnus_audit_entry() IS NOT NULL BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), new.id, 'concepts', 'update', '{"id":' || old.id || ',"type":' || json_quote(old.type) || ',"name":' || json_quote(old.name) || ',"attributes":' || old.attributes || ',"metadata":' || old.metadata || ',"version":' || old.version || ',"updated_at":' || json_quote(old.updated_at) || '}', '{"id":' || new.id || ',"type":' || json_quote(new.type) || ',"name":' || json_quote(new.name) || ',"attributes":' || new.attributes || ',"metadata":' || new.metadata || ',"version":' || new.version || ',"updated_at":' || json_quote(new.updated_at) || '}');
    END;
    CREATE TRIGGER audit_concepts_delete AFTER DELETE ON concepts WHEN somnus_audit_entry() IS NOT NULL BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), old.id, 'concepts', 'delete', '{"id":' || old.id || ',"type":' || json_quote(old.type) || ',"name":' || json_quote(old.name) || ',"attributes":' || old.attributes || ',"metadata":' || old.metadata || ',"version":' || old.version || ',"updated_at":' || json_quote(old.updated_at) || '}', NULL);
    END;
    CREATE TRIGGER audit_propositions_insert AFTER INSERT ON propositions WHEN somnus_audit_entry() IS NOT NULL AND new.id < somnus_audit_first_id() BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), new.id, 'propositions', 'insert', NULL, NULL);
    END;
    CREATE TRIGGER audit_propositions_update AFTER UPDATE ON propositions WHEN somnus_audit_entry() IS NOT NULL BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), new.id, 'propositions', 'update', '{"id":' || old.id || ',"subject":' || old.subject || ',"predicate":' || json_quote(old.predicate) || ',"object":' || old.object || ',"attributes":' || old.attributes || ',"metadata":' || old.metadata || ',"version":' || old.version || ',"updated_at":' || json_quote(old.updated_at) || '}', '{"id":' || new.id || ',"subject":' || new.subject || ',"predicate":' || json_quote(new.predicate) || ',"object":' || new.object || ',"attributes":' || new.attributes || ',"metadata":' || new.metadata || ',"version":' || new.version || ',"updated_at":' || json_quote(new.updated_at) || '}');
    END;
    CREATE TRIGGER audit_propositions_delete AFTER DELETE ON propositions WHEN somnus_audit_entry() IS NOT NULL BEGIN
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (somnus_audit_entry(), old.id, 'propositions', 'delete', '{"id":' || old.id || ',"subject":' || old.subject || ',"predicate":' || json_quote(old.predicate) || ',"object":' || old.object || ',"attributes":' || old.attributes || ',"metadata":' || old.metadata || ',"version":' || old.version || ',"updated_at":' || json_quote(old.updated_at) || '}', NULL);
    END;
    "#,
        postgres: r#"
    CREATE TABLE audit_log (
        id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        at              TEXT NOT NULL,
        actor           TEXT NOT NULL,
        trigger_name    TEXT NOT NULL,
        reason          TEXT,
        command         TEXT NOT NULL,
        kind            TEXT NOT NULL,
        rolls_back      BIGINT,
        rolled_back_by  BIGINT,
        first_change    BIGINT NOT NULL DEFAULT 0,
        n_changes       BIGINT NOT NULL DEFAULT 0,
        first_id        BIGINT NOT NULL DEFAULT 0,
        end_id          BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX audit_log_ids ON audit_log(first_id);
    CREATE INDEX audit_log_actor ON audit_log(actor, id);
    CREATE TABLE audit_changes (
        id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        entry    BIGINT NOT NULL,
        element  BIGINT NOT NULL,
        tbl      TEXT NOT NULL,
        op       TEXT NOT NULL,
        before   TEXT,
        after    TEXT
    );
    CREATE INDEX audit_changes_element ON audit_changes(element, entry);
    -- the entry a transaction's writes belong to, and the first id it
    -- allocated, as the writer sets them (set_config(..., true): for its
    -- transaction only)
    CREATE FUNCTION audit_entry() RETURNS BIGINT LANGUAGE sql STABLE AS $$
        SELECT NULLIF(current_setting('somnus.audit_entry', true), '')::BIGINT
    $$;
    CREATE FUNCTION audit_first_id() RETURNS BIGINT LANGUAGE sql STABLE AS $$
        SELECT COALESCE(NULLIF(current_setting('somnus.audit_first_id', true), '')::BIGINT, 0)
    $$;
    -- a row's image, as the SQLite triggers write it
    CREATE FUNCTION concept_image(c concepts) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
        SELECT json_build_object('id', c.id, 'type', c.type, 'name', c.name, 'attributes', c.attributes,
                                 'metadata', c.metadata, 'version', c.version, 'updated_at', c.updated_at)::text
    $$;
    CREATE FUNCTION proposition_image(p propositions) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
        SELECT json_build_object('id', p.id, 'subject', p.subject, 'predicate', p.predicate, 'object', p.object,
                                 'attributes', p.attributes, 'metadata', p.metadata, 'version', p.version,
                                 'updated_at', p.updated_at)::text
    $$;
    -- one trigger function for both tables: the table's name says which
    -- image a row has
    CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    DECLARE
        e BIGINT := audit_entry();
        element BIGINT;
        old_image TEXT;
        new_image TEXT;
    BEGIN
        IF e IS NULL THEN RETURN NULL; END IF;
        IF TG_OP = 'INSERT' THEN
            IF NEW.id < audit_first_id() THEN
                INSERT INTO audit_changes(entry, element, tbl, op, before, after)
                VALUES (e, NEW.id, TG_TABLE_NAME, 'insert', NULL, NULL);
            END IF;
            RETURN NULL;
        END IF;
        -- an update is filed under the row as it is now (as SQLite's is)
        IF TG_OP = 'UPDATE' THEN element := NEW.id; ELSE element := OLD.id; END IF;
        IF TG_TABLE_NAME = 'concepts' THEN
            old_image := concept_image(OLD);
            IF TG_OP = 'UPDATE' THEN new_image := concept_image(NEW); END IF;
        ELSE
            old_image := proposition_image(OLD);
            IF TG_OP = 'UPDATE' THEN new_image := proposition_image(NEW); END IF;
        END IF;
        INSERT INTO audit_changes(entry, element, tbl, op, before, after)
        VALUES (e, element, TG_TABLE_NAME, lower(TG_OP), old_image, new_image);
        RETURN NULL;
    END $$;
    CREATE TRIGGER audit_concepts AFTER INSERT OR UPDATE OR DELETE ON concepts
        FOR EACH ROW EXECUTE FUNCTION audit_row();
    CREATE TRIGGER audit_propositions AFTER INSERT OR UPDATE OR DELETE ON propositions
        FOR EACH ROW EXECUTE FUNCTION audit_row();
    "#,
    },
    // 6: the re-embed queue trigger no longer uses OR IGNORE, whose conflict
    // resolution would override the ON CONFLICT clause of an outer upsert
    // (rollback restores rows with INSERT .. ON CONFLICT DO UPDATE).
    Migration {
        sqlite: r#"
    DROP TRIGGER concepts_embed_au;
    CREATE TRIGGER concepts_embed_au AFTER UPDATE OF name, attributes ON concepts BEGIN
        INSERT INTO embed_queue(id) SELECT new.id WHERE NOT EXISTS (SELECT 1 FROM embed_queue WHERE id = new.id);
    END;
    "#,
        postgres: r#"
    -- nothing: the PostgreSQL trigger of migration 3 never used OR IGNORE
    SELECT 1;
    "#,
    },
    // 7: sleep cycles, their proposals, contradictions and policies; audit
    // entries belong to a group (a run, an approval, a group rollback).
    Migration {
        sqlite: r#"
    ALTER TABLE audit_log ADD COLUMN batch TEXT;
    CREATE INDEX audit_log_batch ON audit_log(batch) WHERE batch IS NOT NULL;
    CREATE TABLE sleep_runs (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        scope TEXT NOT NULL,
        trigger_name TEXT NOT NULL,
        reasoner TEXT NOT NULL,
        actor TEXT NOT NULL,
        pid INTEGER NOT NULL,
        now TEXT NOT NULL,
        parameters TEXT NOT NULL,
        status TEXT NOT NULL,
        phase INTEGER NOT NULL DEFAULT 0,
        report TEXT,
        error TEXT
    );
    CREATE TABLE sleep_phases (
        run INTEGER NOT NULL,
        phase INTEGER NOT NULL,
        name TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        millis INTEGER NOT NULL,
        counts TEXT NOT NULL,
        notes TEXT NOT NULL,
        PRIMARY KEY (run, phase)
    );
    CREATE TABLE proposals (
        id INTEGER PRIMARY KEY,
        run INTEGER,
        created_at TEXT NOT NULL,
        actor TEXT NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT,
        reason TEXT
    );
    CREATE TABLE proposal_items (
        proposal INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        class TEXT NOT NULL,
        key TEXT NOT NULL,
        title TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        rationale TEXT NOT NULL,
        evidence TEXT NOT NULL,
        confidence REAL NOT NULL,
        preview TEXT NOT NULL,
        targets TEXT NOT NULL,
        status TEXT NOT NULL,
        edited_command TEXT,
        decided_at TEXT,
        decided_by TEXT,
        reason TEXT,
        PRIMARY KEY (proposal, seq)
    );
    CREATE INDEX proposal_items_key ON proposal_items(key, status);
    CREATE TABLE contradictions (
        id INTEGER PRIMARY KEY,
        run INTEGER,
        found_at TEXT NOT NULL,
        subject INTEGER NOT NULL,
        predicate TEXT NOT NULL,
        slot TEXT NOT NULL,
        fact_a INTEGER NOT NULL,
        fact_b INTEGER NOT NULL,
        detail TEXT NOT NULL,
        status TEXT NOT NULL,
        resolution TEXT,
        proposal INTEGER,
        item INTEGER,
        decided_at TEXT,
        decided_by TEXT
    );
    CREATE TABLE sleep_policy (
        class TEXT PRIMARY KEY,
        mode TEXT NOT NULL,
        set_at TEXT NOT NULL,
        set_by TEXT NOT NULL
    );
    CREATE TABLE sleep_notes (
        id INTEGER PRIMARY KEY,
        element INTEGER NOT NULL,
        label TEXT NOT NULL,
        run INTEGER,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        rule TEXT NOT NULL,
        inputs TEXT NOT NULL
    );
    CREATE INDEX sleep_notes_element ON sleep_notes(element);
    CREATE INDEX sleep_notes_label ON sleep_notes(label);
    "#,
        postgres: r#"
    ALTER TABLE audit_log ADD COLUMN batch TEXT;
    CREATE INDEX audit_log_batch ON audit_log(batch) WHERE batch IS NOT NULL;
    CREATE TABLE sleep_runs (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        scope TEXT NOT NULL,
        trigger_name TEXT NOT NULL,
        reasoner TEXT NOT NULL,
        actor TEXT NOT NULL,
        pid BIGINT NOT NULL,
        now TEXT NOT NULL,
        parameters TEXT NOT NULL,
        status TEXT NOT NULL,
        phase BIGINT NOT NULL DEFAULT 0,
        report TEXT,
        error TEXT
    );
    CREATE TABLE sleep_phases (
        run BIGINT NOT NULL,
        phase BIGINT NOT NULL,
        name TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        millis BIGINT NOT NULL,
        counts TEXT NOT NULL,
        notes TEXT NOT NULL,
        PRIMARY KEY (run, phase)
    );
    CREATE TABLE proposals (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        run BIGINT,
        created_at TEXT NOT NULL,
        actor TEXT NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT,
        reason TEXT
    );
    CREATE TABLE proposal_items (
        proposal BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        class TEXT NOT NULL,
        key TEXT NOT NULL,
        title TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        rationale TEXT NOT NULL,
        evidence TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        preview TEXT NOT NULL,
        targets TEXT NOT NULL,
        status TEXT NOT NULL,
        edited_command TEXT,
        decided_at TEXT,
        decided_by TEXT,
        reason TEXT,
        PRIMARY KEY (proposal, seq)
    );
    CREATE INDEX proposal_items_key ON proposal_items(key, status);
    CREATE TABLE contradictions (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        run BIGINT,
        found_at TEXT NOT NULL,
        subject BIGINT NOT NULL,
        predicate TEXT NOT NULL,
        slot TEXT NOT NULL,
        fact_a BIGINT NOT NULL,
        fact_b BIGINT NOT NULL,
        detail TEXT NOT NULL,
        status TEXT NOT NULL,
        resolution TEXT,
        proposal BIGINT,
        item BIGINT,
        decided_at TEXT,
        decided_by TEXT
    );
    CREATE TABLE sleep_policy (
        class TEXT PRIMARY KEY,
        mode TEXT NOT NULL,
        set_at TEXT NOT NULL,
        set_by TEXT NOT NULL
    );
    CREATE TABLE sleep_notes (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        element BIGINT NOT NULL,
        label TEXT NOT NULL,
        run BIGINT,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        rule TEXT NOT NULL,
        inputs TEXT NOT NULL
    );
    CREATE INDEX sleep_notes_element ON sleep_notes(element);
    CREATE INDEX sleep_notes_label ON sleep_notes(label);
    "#,
    },
    // 8: the full-text index is brought up to date once per command, not per
    // row: a full-text table written inside a transaction flushes to disk
    // at every later statement's savepoint, so per-row triggers made a bulk
    // UPSERT write (and then merge) one tiny index segment per concept.
    // Concepts whose indexed text changed wait in fts_dirty; `sync_fts`
    // indexes them. (NOT
    // EXISTS, not OR IGNORE: an outer statement's conflict clause would
    // override the trigger's.)
    Migration {
        sqlite: r#"
    CREATE TABLE fts_dirty (id INTEGER PRIMARY KEY);
    DROP TRIGGER concepts_fts_ai;
    DROP TRIGGER concepts_fts_ad;
    DROP TRIGGER concepts_fts_au;
    CREATE TRIGGER concepts_fts_ai AFTER INSERT ON concepts BEGIN
        INSERT INTO fts_dirty(id) SELECT new.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = new.id);
    END;
    CREATE TRIGGER concepts_fts_ad AFTER DELETE ON concepts BEGIN
        INSERT INTO fts_dirty(id) SELECT old.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = old.id);
    END;
    CREATE TRIGGER concepts_fts_au AFTER UPDATE OF id, name, attributes ON concepts
    WHEN old.id IS NOT new.id OR old.name IS NOT new.name
      OR json_extract(old.attributes, '$.aliases') IS NOT json_extract(new.attributes, '$.aliases')
      OR json_extract(old.attributes, '$.description') IS NOT json_extract(new.attributes, '$.description')
      OR json_extract(old.attributes, '$.content_summary') IS NOT json_extract(new.attributes, '$.content_summary')
      OR json_extract(old.attributes, '$.summary') IS NOT json_extract(new.attributes, '$.summary')
      OR json_extract(old.attributes, '$.title') IS NOT json_extract(new.attributes, '$.title')
      OR json_extract(old.attributes, '$.content') IS NOT json_extract(new.attributes, '$.content')
    BEGIN
        INSERT INTO fts_dirty(id) SELECT old.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = old.id);
        INSERT INTO fts_dirty(id) SELECT new.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = new.id);
    END;
    "#,
        postgres: r#"
    -- nothing: the generated search column of migration 2 is kept by
    -- each row as it is written, and GIN takes row updates cheaply
    SELECT 1;
    "#,
    },
    // 9: audit retention: an entry whose before/after images were pruned
    //    says when, and can no longer be undone
    Migration {
        sqlite: r#"
    ALTER TABLE audit_log ADD COLUMN pruned_at TEXT;
    "#,
        postgres: r#"
    ALTER TABLE audit_log ADD COLUMN pruned_at TEXT;
    "#,
    },
    // 10: callers' keys: a name, a role, and only a digest of the key
    Migration {
        sqlite: r#"
    CREATE TABLE api_keys (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        revoked_at TEXT
    );
    "#,
        postgres: r#"
    CREATE TABLE api_keys (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        revoked_at TEXT
    );
    "#,
    },
    // 11: pending proposal items that disagree with each other or with
    //     committed memory, marked on both
    Migration {
        sqlite: r#"
    CREATE TABLE proposal_conflicts (
        proposal INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        other_proposal INTEGER,
        other_seq INTEGER,
        slot TEXT NOT NULL,
        note TEXT NOT NULL
    );
    CREATE INDEX proposal_conflicts_item ON proposal_conflicts(proposal, seq);
    "#,
        postgres: r#"
    CREATE TABLE proposal_conflicts (
        proposal BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        other_proposal BIGINT,
        other_seq BIGINT,
        slot TEXT NOT NULL,
        note TEXT NOT NULL
    );
    CREATE INDEX proposal_conflicts_item ON proposal_conflicts(proposal, seq);
    "#,
    },
    // 12: the processes keeping the memory maintained (somnus serve, mcp,
    //     maintain): what they run, when they last looked, what comes next
    Migration {
        sqlite: r#"
    CREATE TABLE maintainers (
        pid INTEGER NOT NULL,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        beat_at TEXT NOT NULL,
        settings TEXT NOT NULL,
        next_at TEXT,
        next TEXT,
        last TEXT,
        PRIMARY KEY (pid, kind)
    );
    "#,
        postgres: r#"
    CREATE TABLE maintainers (
        pid BIGINT NOT NULL,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        beat_at TEXT NOT NULL,
        settings TEXT NOT NULL,
        next_at TEXT,
        next TEXT,
        last TEXT,
        PRIMARY KEY (pid, kind)
    );
    "#,
    },
    // 13: KQL's comparisons on PostgreSQL, as SQLite makes them (see
    //     engine/plan/filter.rs): a value's class (numbers and booleans
    //     before text), its number, its text; a comparison of two jsonb
    //     values by those; the smallest of a group's sort keys.
    Migration {
        sqlite: r#"
    -- nothing: SQLite compares values this way itself
    SELECT 1;
    "#,
        postgres: r#"
    CREATE FUNCTION kip_class(v jsonb) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN v IS NULL THEN NULL
                    ELSE CASE jsonb_typeof(v) WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'null' THEN NULL ELSE 2 END END
    $$;
    CREATE FUNCTION kip_num(v jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE jsonb_typeof(v) WHEN 'number' THEN (v #>> '{}')::numeric
                                    WHEN 'boolean' THEN CASE WHEN v = 'true'::jsonb THEN 1 ELSE 0 END END
    $$;
    CREATE FUNCTION kip_text(v jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE jsonb_typeof(v) WHEN 'string' THEN v #>> '{}' WHEN 'number' THEN v #>> '{}'
                                    WHEN 'boolean' THEN CASE WHEN v = 'true'::jsonb THEN '1' ELSE '0' END
                                    WHEN 'null' THEN NULL ELSE v::text END
    $$;
    CREATE FUNCTION kip_cmp(a jsonb, b jsonb) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
            WHEN kip_class(a) IS NULL OR kip_class(b) IS NULL THEN NULL
            WHEN kip_class(a) <> kip_class(b) THEN sign(kip_class(a) - kip_class(b))::int
            WHEN kip_class(a) = 1 THEN sign(kip_num(a) - kip_num(b))::int
            WHEN kip_text(a) COLLATE "C" < kip_text(b) COLLATE "C" THEN -1
            WHEN kip_text(a) = kip_text(b) THEN 0
            ELSE 1 END
    $$;
    CREATE FUNCTION kip_least(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN kip_class(a) IS NULL THEN b WHEN kip_class(b) IS NULL THEN a
                    WHEN kip_cmp(b, a) < 0 THEN b ELSE a END
    $$;
    CREATE AGGREGATE kip_min(jsonb) (SFUNC = kip_least, STYPE = jsonb);
    "#,
    },
    // 14: conflict marks are listed in the order they were made: SQLite
    //     keeps that order in its rowid, PostgreSQL needs a column for it
    Migration {
        sqlite: r#"
    -- nothing: the rowid orders the marks
    SELECT 1;
    "#,
        postgres: r#"
    ALTER TABLE proposal_conflicts ADD COLUMN id BIGINT GENERATED BY DEFAULT AS IDENTITY;
    "#,
    },
    // 15: how a reader learns that others committed (SQLite's
    //     `PRAGMA data_version`): each server session counts the write
    //     statements it made in a row of its own (no two writers touch
    //     one row), visible when they commit; a reader sums the others'
    //     rows. Every graph write is an audit entry, so the audit log
    //     stands for the graph; the cycle's and the reviewers' own tables
    //     count themselves.
    Migration {
        sqlite: r#"
    -- nothing: PRAGMA data_version
    SELECT 1;
    "#,
        postgres: r#"
    CREATE TABLE changes (pid INT PRIMARY KEY, n BIGINT NOT NULL);
    CREATE FUNCTION somnus_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO changes(pid, n) VALUES (pg_backend_pid(), 1)
        ON CONFLICT (pid) DO UPDATE SET n = changes.n + 1;
        RETURN NULL;
    END $$;
    CREATE TRIGGER audit_log_changed AFTER INSERT OR UPDATE OR DELETE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER sleep_runs_changed AFTER INSERT OR UPDATE OR DELETE ON sleep_runs FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER sleep_phases_changed AFTER INSERT OR UPDATE OR DELETE ON sleep_phases FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER proposals_changed AFTER INSERT OR UPDATE OR DELETE ON proposals FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER proposal_items_changed AFTER INSERT OR UPDATE OR DELETE ON proposal_items FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER proposal_conflicts_changed AFTER INSERT OR UPDATE OR DELETE ON proposal_conflicts FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER contradictions_changed AFTER INSERT OR UPDATE OR DELETE ON contradictions FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER sleep_policy_changed AFTER INSERT OR UPDATE OR DELETE ON sleep_policy FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    CREATE TRIGGER maintainers_changed AFTER INSERT OR UPDATE OR DELETE ON maintainers FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    "#,
    },
    // 16: an entry's changes found by the entry: SQLite walks them from
    //     the entry's first change by rowid; PostgreSQL's planner, whose
    //     statistics lag a fast-growing trail, would scan the whole table
    //     to count a write's changes
    Migration {
        sqlite: r#"
    -- nothing: the rowid range serves
    SELECT 1;
    "#,
        postgres: r#"
    CREATE INDEX audit_changes_entry ON audit_changes(entry, id);
    "#,
    },
    // 17: the operator's decisions on pairs, which the matcher learns from
    Migration {
        sqlite: r#"
    CREATE TABLE match_labels (
        id INTEGER PRIMARY KEY,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        levels TEXT NOT NULL,
        same INTEGER NOT NULL,
        proposal INTEGER,
        item INTEGER,
        decided_by TEXT NOT NULL,
        decided_at TEXT NOT NULL
    );
    CREATE INDEX match_labels_item ON match_labels(proposal, item);
    "#,
        postgres: r#"
    CREATE TABLE match_labels (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        levels TEXT NOT NULL,
        same BIGINT NOT NULL,
        proposal BIGINT,
        item BIGINT,
        decided_by TEXT NOT NULL,
        decided_at TEXT NOT NULL
    );
    CREATE INDEX match_labels_item ON match_labels(proposal, item);
    CREATE TRIGGER match_labels_changed AFTER INSERT OR UPDATE OR DELETE ON match_labels FOR EACH STATEMENT EXECUTE FUNCTION somnus_changed();
    "#,
    },
    // 18: an item the operator edited keeps what was proposed beside what
    //     was applied (its title, commands and preview, as JSON)
    Migration {
        sqlite: r#"
    ALTER TABLE proposal_items ADD COLUMN proposed TEXT;
    "#,
        postgres: r#"
    ALTER TABLE proposal_items ADD COLUMN proposed TEXT;
    "#,
    },
    // 19: the requests agents sent (HTTP, MCP, rpc) and what came back,
    //     and per element how often and when each caller read it (kept
    //     when the log itself is pruned). Not counted as changes: reading
    //     never changes the memory. No index on the time: rows are
    //     appended in time order, so the retention finds its cut by id.
    Migration {
        sqlite: r#"
    CREATE TABLE read_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        caller TEXT NOT NULL,
        channel TEXT NOT NULL,
        kind TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        elements TEXT NOT NULL,
        rows INTEGER NOT NULL,
        micros INTEGER NOT NULL,
        error TEXT
    );
    CREATE TABLE read_use (
        element INTEGER NOT NULL,
        caller TEXT NOT NULL,
        count INTEGER NOT NULL,
        last_at TEXT NOT NULL,
        PRIMARY KEY (element, caller)
    ) WITHOUT ROWID;
    "#,
        postgres: r#"
    CREATE TABLE read_log (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        at TEXT NOT NULL,
        caller TEXT NOT NULL,
        channel TEXT NOT NULL,
        kind TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        elements TEXT NOT NULL,
        rows BIGINT NOT NULL,
        micros BIGINT NOT NULL,
        error TEXT
    );
    CREATE TABLE read_use (
        element BIGINT NOT NULL,
        caller TEXT NOT NULL,
        count BIGINT NOT NULL,
        last_at TEXT NOT NULL,
        PRIMARY KEY (element, caller)
    );
    "#,
    },
    // 20: the full-text index holds analysed terms (words segmented,
    //     stemmed in their language, folded; see `analysis`), and a
    //     name's codes and numbers apart from its words, so an id such as
    //     "D17:24" cannot outweigh the text. PostgreSQL keeps its own
    //     generated document and analyses the question only.
    Migration {
        sqlite: r#"
    DROP TABLE concept_fts;
    CREATE VIRTUAL TABLE concept_fts USING fts5(
        name, codes, aliases, description, body,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE VIRTUAL TABLE concept_vocab USING fts5vocab(concept_fts, 'row');
    DELETE FROM fts_dirty;
    INSERT INTO concept_fts(rowid, name, codes, aliases, description, body)
        SELECT id, somnus_terms(name, 'words'), somnus_terms(name, 'codes'),
            somnus_terms((SELECT group_concat(value, ' ') FROM json_each(attributes, '$.aliases'))),
            somnus_terms(json_extract(attributes, '$.description')),
            somnus_terms(concat_ws(' ', json_extract(attributes, '$.content_summary'), json_extract(attributes, '$.summary'),
                      json_extract(attributes, '$.title'), json_extract(attributes, '$.content')))
        FROM concepts;
    "#,
        postgres: r#"
    SELECT 1;
    "#,
    },
    // 21: SQLite's `PRAGMA data_version` moves with any commit, the read
    //     log's included, so a console or a maintainer watching the file
    //     took an agent's reads for changes. The tables migration 15
    //     counts on PostgreSQL bump one counter here; a reader looks at it
    //     when `data_version` moved (`Nexus::data_version`). Written so
    //     it may run again (a memory whose version was set back).
    Migration {
        sqlite: r#"
    CREATE TABLE IF NOT EXISTS memory_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
    INSERT OR IGNORE INTO memory_changes(id, n) VALUES (1, 0);
    CREATE TRIGGER IF NOT EXISTS audit_log_insert_counted AFTER INSERT ON audit_log BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS audit_log_update_counted AFTER UPDATE ON audit_log BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS audit_log_delete_counted AFTER DELETE ON audit_log BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_runs_insert_counted AFTER INSERT ON sleep_runs BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_runs_update_counted AFTER UPDATE ON sleep_runs BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_runs_delete_counted AFTER DELETE ON sleep_runs BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_phases_insert_counted AFTER INSERT ON sleep_phases BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_phases_update_counted AFTER UPDATE ON sleep_phases BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_phases_delete_counted AFTER DELETE ON sleep_phases BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposals_insert_counted AFTER INSERT ON proposals BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposals_update_counted AFTER UPDATE ON proposals BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposals_delete_counted AFTER DELETE ON proposals BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_items_insert_counted AFTER INSERT ON proposal_items BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_items_update_counted AFTER UPDATE ON proposal_items BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_items_delete_counted AFTER DELETE ON proposal_items BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_conflicts_insert_counted AFTER INSERT ON proposal_conflicts BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_conflicts_update_counted AFTER UPDATE ON proposal_conflicts BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS proposal_conflicts_delete_counted AFTER DELETE ON proposal_conflicts BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS contradictions_insert_counted AFTER INSERT ON contradictions BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS contradictions_update_counted AFTER UPDATE ON contradictions BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS contradictions_delete_counted AFTER DELETE ON contradictions BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_policy_insert_counted AFTER INSERT ON sleep_policy BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_policy_update_counted AFTER UPDATE ON sleep_policy BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS sleep_policy_delete_counted AFTER DELETE ON sleep_policy BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS api_keys_insert_counted AFTER INSERT ON api_keys BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS api_keys_update_counted AFTER UPDATE ON api_keys BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS api_keys_delete_counted AFTER DELETE ON api_keys BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS maintainers_insert_counted AFTER INSERT ON maintainers BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS maintainers_update_counted AFTER UPDATE ON maintainers BEGIN UPDATE memory_changes SET n = n + 1; END;
    CREATE TRIGGER IF NOT EXISTS maintainers_delete_counted AFTER DELETE ON maintainers BEGIN UPDATE memory_changes SET n = n + 1; END;
    "#,
        postgres: r#"
    SELECT 1;
    "#,
    },
    // 22: the full-text index also holds the texts of a concept's other
    //     attributes (`store::fts::rest`: not its verbatim files, `*_md`,
    //     nor days and time stamps; none of a type's definition), weighed
    //     least, so a Person is found by what its profile says and an
    //     Event by who took part. On SQLite
    //     every concept is queued and indexed again as the migration ends
    //     (`migrate`); any change of the attributes queues a concept now.
    //     On PostgreSQL the generated document gains them at weight D.
    Migration {
        sqlite: r#"
    DROP TABLE concept_vocab;
    DROP TABLE concept_fts;
    CREATE VIRTUAL TABLE concept_fts USING fts5(
        name, codes, aliases, description, body, rest,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE VIRTUAL TABLE concept_vocab USING fts5vocab(concept_fts, 'row');
    DROP TRIGGER concepts_fts_au;
    CREATE TRIGGER concepts_fts_au AFTER UPDATE OF id, name, attributes ON concepts
    WHEN old.id IS NOT new.id OR old.name IS NOT new.name OR old.attributes IS NOT new.attributes
    BEGIN
        INSERT INTO fts_dirty(id) SELECT old.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = old.id);
        INSERT INTO fts_dirty(id) SELECT new.id WHERE NOT EXISTS (SELECT 1 FROM fts_dirty WHERE id = new.id);
    END;
    DELETE FROM fts_dirty;
    INSERT INTO fts_dirty(id) SELECT id FROM concepts;
    "#,
        postgres: r#"
    CREATE FUNCTION somnus_rest(a jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT left(COALESCE(string_agg(s #>> '{}', ' '), ''), 65536)
        FROM jsonb_each(CASE WHEN jsonb_typeof(a) = 'object' THEN a ELSE '{}'::jsonb END) e,
             jsonb_path_query(e.value, 'strict $.**') s
        WHERE jsonb_typeof(s) = 'string'
          AND e.key NOT IN ('aliases', 'description', 'content_summary', 'summary', 'title', 'content')
          AND right(e.key, 3) <> '_md'
          AND (s #>> '{}') !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.+Z-]+)?$'
    $$;
    ALTER TABLE concepts DROP COLUMN search;
    ALTER TABLE concepts ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, name), 'A')
        || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes -> 'aliases', '[]'::jsonb)), 'A')
        || setweight(to_tsvector('simple'::regconfig, COALESCE(attributes ->> 'description', '')), 'B')
        || setweight(to_tsvector('simple'::regconfig,
               COALESCE(attributes ->> 'content_summary', '') || ' ' || COALESCE(attributes ->> 'summary', '') || ' '
               || COALESCE(attributes ->> 'title', '') || ' ' || COALESCE(attributes ->> 'content', '')), 'C')
        || setweight(to_tsvector('simple'::regconfig, CASE WHEN left(type, 1) = '$' THEN '' ELSE somnus_rest(attributes) END), 'D')
    ) STORED;
    CREATE INDEX concepts_search ON concepts USING GIN (search);
    "#,
    },
    // 23: PostgreSQL's search document is folded as SQLite's is and as a
    //     query's words are (`analysis::fold`): a letter's diacritics are
    //     dropped (`usuário` is found by "usuario", `Lavapiés` by
    //     "lavapies"), and a `/` parts words (`Europe/Madrid` holds
    //     "europe" and "madrid", which the `simple` parser read as one
    //     path). `somnus_fold` maps each precomposed Latin letter to its
    //     base letter (those Unicode decomposes into a letter and marks)
    //     and drops combining marks; SQLite's tokenizer does both. On SQLite, a word with diacritics
    //     is also indexed as its plain spelling stems
    //     (`analysis::document`): every concept is indexed again.
    Migration {
        sqlite: r#"
    DELETE FROM fts_dirty;
    INSERT INTO fts_dirty(id) SELECT id FROM concepts;
    "#,
        postgres: r#"
    CREATE FUNCTION somnus_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT translate(t, '/ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ̴̵̶̷̸̡̢̧̨̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡', ' AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwyAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy')
    $$;
    ALTER TABLE concepts DROP COLUMN search;
    ALTER TABLE concepts ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, somnus_fold(name)), 'A')
        || setweight(to_tsvector('simple'::regconfig, somnus_fold(COALESCE(attributes -> 'aliases', '[]'::jsonb)::text)), 'A')
        || setweight(to_tsvector('simple'::regconfig, somnus_fold(COALESCE(attributes ->> 'description', ''))), 'B')
        || setweight(to_tsvector('simple'::regconfig, somnus_fold(
               COALESCE(attributes ->> 'content_summary', '') || ' ' || COALESCE(attributes ->> 'summary', '') || ' '
               || COALESCE(attributes ->> 'title', '') || ' ' || COALESCE(attributes ->> 'content', ''))), 'C')
        || setweight(to_tsvector('simple'::regconfig, somnus_fold(CASE WHEN left(type, 1) = '$' THEN '' ELSE somnus_rest(attributes) END)), 'D')
    ) STORED;
    CREATE INDEX concepts_search ON concepts USING GIN (search);
    "#,
    },
    // 25: a write on PostgreSQL no longer compiles SQL for every row it
    //     touches. `somnus_fold` was a SQL function the planner inlined,
    //     parsing its body (two 600-character literals) again at each of
    //     its five calls in the generated search document, for every row
    //     written; `somnus_rest` was planned again by each statement; and
    //     the audit and embedding triggers, each set to their own
    //     `search_path`, switched the session's path at every row. Both
    //     text functions are now PL/pgSQL (compiled once per connection)
    //     and give the same text for every input (a text of ASCII letters
    //     only has its `/` spaced; one with no letter `translate` maps is
    //     itself); the triggers name the memory's schema instead. One
    //     concept inserted with its audit: 412 µs of the database's time
    //     before, 84 µs after.
    Migration {
        sqlite: r#"
    SELECT 1;
    "#,
        postgres: r#"
    CREATE OR REPLACE FUNCTION somnus_fold(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
        IF octet_length(t) = length(t) THEN RETURN replace(t, '/', ' '); END IF;
        IF t !~ '[/\u00C0-\u024F\u0300-\u036F\u1E00-\u1EFF]' THEN RETURN t; END IF;
        RETURN translate(t, '/ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ̴̵̶̷̸̡̢̧̨̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡', ' AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwyAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy');
    END $$;
    CREATE OR REPLACE FUNCTION somnus_rest(a jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
        RETURN (SELECT left(COALESCE(string_agg(s #>> '{}', ' '), ''), 65536)
            FROM jsonb_each(CASE WHEN jsonb_typeof(a) = 'object' THEN a ELSE '{}'::jsonb END) e,
                 jsonb_path_query(e.value, 'strict $.**') s
            WHERE jsonb_typeof(s) = 'string'
              AND e.key NOT IN ('aliases', 'description', 'content_summary', 'summary', 'title', 'content')
              AND right(e.key, 3) <> '_md'
              AND (s #>> '{}') !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.+Z-]+)?$');
    END $$;
    CREATE OR REPLACE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        e BIGINT := @schema@.audit_entry();
        element BIGINT;
        old_image TEXT;
        new_image TEXT;
    BEGIN
        IF e IS NULL THEN RETURN NULL; END IF;
        IF TG_OP = 'INSERT' THEN
            IF NEW.id < @schema@.audit_first_id() THEN
                INSERT INTO @schema@.audit_changes(entry, element, tbl, op, before, after)
                VALUES (e, NEW.id, TG_TABLE_NAME, 'insert', NULL, NULL);
            END IF;
            RETURN NULL;
        END IF;
        -- an update is filed under the row as it is now (as SQLite's is)
        IF TG_OP = 'UPDATE' THEN element := NEW.id; ELSE element := OLD.id; END IF;
        IF TG_TABLE_NAME = 'concepts' THEN
            old_image := @schema@.concept_image(OLD);
            IF TG_OP = 'UPDATE' THEN new_image := @schema@.concept_image(NEW); END IF;
        ELSE
            old_image := @schema@.proposition_image(OLD);
            IF TG_OP = 'UPDATE' THEN new_image := @schema@.proposition_image(NEW); END IF;
        END IF;
        INSERT INTO @schema@.audit_changes(entry, element, tbl, op, before, after)
        VALUES (e, element, TG_TABLE_NAME, lower(TG_OP), old_image, new_image);
        RETURN NULL;
    END $$;
    ALTER FUNCTION audit_row() RESET ALL;
    CREATE OR REPLACE FUNCTION concepts_embed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM @schema@.embeddings WHERE id = OLD.id;
            DELETE FROM @schema@.embed_queue WHERE id = OLD.id;
        ELSIF OLD.name IS DISTINCT FROM NEW.name OR OLD.attributes IS DISTINCT FROM NEW.attributes THEN
            INSERT INTO @schema@.embed_queue(id) VALUES (NEW.id) ON CONFLICT (id) DO NOTHING;
        END IF;
        RETURN NULL;
    END $$;
    ALTER FUNCTION concepts_embed() RESET ALL;
    CREATE OR REPLACE FUNCTION somnus_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO @schema@.changes AS c(pid, n) VALUES (pg_backend_pid(), 1)
        ON CONFLICT (pid) DO UPDATE SET n = c.n + 1;
        RETURN NULL;
    END $$;
    "#,
    },
];
