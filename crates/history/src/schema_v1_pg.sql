-- Schema version 1 of fiox's history on PostgreSQL (see pg.rs): the tables of schema_v1.sql
-- in PostgreSQL's types. Times are Unix seconds (UTC).
CREATE TABLE fiox_history (
    schema_version BIGINT NOT NULL,
    application_id BIGINT NOT NULL
);
INSERT INTO fiox_history VALUES (0, 0);

CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    recorded_at BIGINT NOT NULL,
    run_at BIGINT NOT NULL,
    source TEXT NOT NULL,
    origin TEXT,
    host TEXT,
    kernel TEXT,
    cpu TEXT,
    fiox_commit TEXT,
    tool TEXT,
    targets TEXT NOT NULL DEFAULT '',
    experiment TEXT,
    variant TEXT,
    job_file TEXT,
    options TEXT,
    env TEXT,
    result TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE
);
CREATE INDEX runs_run_at ON runs(run_at);
CREATE INDEX runs_host ON runs(host);
CREATE INDEX runs_experiment ON runs(experiment);

CREATE TABLE metrics (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    job TEXT NOT NULL,
    metric TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, job, metric)
);
CREATE INDEX metrics_series ON metrics(metric, job, run_id, value);
CREATE INDEX metrics_job ON metrics(job, run_id);

CREATE TABLE tags (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
);
CREATE INDEX tags_tag ON tags(tag, run_id);
