-- Schema version 1 of fiox's history (see store.rs). Times are Unix seconds (UTC).
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    -- When fiox recorded it, and when it ran (the result's own timestamp, else recorded_at).
    recorded_at INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    -- run, experiment, quick or import; for an import, the file it came from.
    source TEXT NOT NULL,
    origin TEXT,
    host TEXT,
    kernel TEXT,
    cpu TEXT,
    fiox_commit TEXT,
    -- The result's "fio version" line (fio-3.33, or fiox's).
    tool TEXT,
    -- The run's targets, sorted, joined by newlines (one series key).
    targets TEXT NOT NULL DEFAULT '',
    experiment TEXT,
    variant TEXT,
    job_file TEXT,
    -- The command line, as a JSON array.
    options TEXT,
    -- fiox.env of the result, as JSON.
    env TEXT,
    -- The run's JSON as produced.
    result TEXT NOT NULL,
    -- FNV-1a of the result: recording or importing the same result twice keeps one.
    digest TEXT NOT NULL UNIQUE
);
CREATE INDEX runs_run_at ON runs(run_at);
CREATE INDEX runs_host ON runs(host);
CREATE INDEX runs_experiment ON runs(experiment);

-- Per job (numjobs clones merged, as fiox compare merges them) and metric: read.iops,
-- read.bw_mib, read.lat_mean_us, read.lat_p50_us, read.lat_p99_us, write.*, ctx...
CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    job TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, job, metric)
) WITHOUT ROWID;
CREATE INDEX metrics_series ON metrics(metric, job, run_id, value);
CREATE INDEX metrics_job ON metrics(job, run_id);

CREATE TABLE tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
CREATE INDEX tags_tag ON tags(tag, run_id);
