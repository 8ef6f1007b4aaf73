//! fiox-experiment answers "did my change make it better, by how much, and is that more than
//! noise?": it loads fio-shaped JSON results (fiox's or fio 3.33's own) into per-job metric
//! samples, summarises and compares them with confidence intervals and significance tests, and
//! prints the comparison as text, markdown, CSV or JSON.

pub mod compare;
pub mod config;
pub mod definition;
pub mod env;
pub mod load;
pub mod run;
pub mod sides;
pub mod stats;
pub mod stop;
pub mod telemetry;
