//! fio 3.33's client/server protocol (its `server.h`, protocol version 97), so that an
//! unmodified `fio --client` can drive `fiox --server` and read fiox's results in every output
//! format fio prints.
//!
//! - [`frame`]: the 24-byte command header with its two CRC16s, fragments of at most 1 KiB
//!   joined into one message, and bounded reads (a claimed length past [`MAX_MESSAGE`], a bad
//!   CRC, a truncated packet or another protocol version is an error for that connection;
//!   nothing is allocated for a length before its bytes have arrived).
//! - [`wire`]: little-endian field writers and bounds-checked readers (fio's on-wire order is
//!   little endian, whatever the host).
//! - [`pdu`]: the small payloads: probe and its reply, job file text, command line, start,
//!   stop, text, job options, ETA.
//! - [`stat`]: fiox's results as fio's `thread_stat`/`group_run_stats`/disk util structures,
//!   byte for byte as fio 3.33 lays them out (checked against a capture of fio's own server).
//! - [`server`]: the listening address forms and one connection's conversation, over a
//!   [`server::Backend`] that parses and runs the jobs (the binary's glue).
//! - [`iolog`]: the logs a server sends its client (IOLOG), as the files fio's client writes.
//! - [`client`]: the `--client` forms and one server's conversation from the client's side,
//!   its messages decoded into fiox's result types ([`stat::decode_ts`] and its siblings) for
//!   the binary to print with fiox's report code.

pub mod check;
pub mod client;
pub mod frame;
pub mod iolog;
pub mod pdu;
pub mod server;
pub mod stat;
pub mod wire;

/// fio 3.33's `FIO_SERVER_VER`.
pub const VERSION: u16 = 97;
/// fio's default port (`FIO_NET_PORT`).
pub const DEFAULT_PORT: u16 = 8765;
/// Largest payload of one fragment (`FIO_SERVER_MAX_FRAGMENT_PDU`).
pub const MAX_FRAGMENT: usize = 1024;
/// Largest message fiox accepts once its fragments are joined. fio allows 2 GiB; a job file,
/// a command line or a result is far below this, and a peer claiming more is refused before
/// anything is allocated for it.
pub const MAX_MESSAGE: usize = 64 << 20;

/// The protocol's commands (`FIO_NET_CMD_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Opcode {
    Quit = 1,
    Exit = 2,
    Job = 3,
    JobLine = 4,
    Text = 5,
    Ts = 6,
    Gs = 7,
    SendEta = 8,
    Eta = 9,
    Probe = 10,
    Start = 11,
    Stop = 12,
    Du = 13,
    ServerStart = 14,
    AddJob = 15,
    Run = 16,
    IoLog = 17,
    UpdateJob = 18,
    LoadFile = 19,
    VTrigger = 20,
    SendFile = 21,
    JobOpt = 22,
}

impl Opcode {
    /// The opcode of a number on the wire (None: not one of fio's).
    pub fn from_u16(v: u16) -> Option<Opcode> {
        use Opcode::*;
        const ALL: [Opcode; 22] = [
            Quit,
            Exit,
            Job,
            JobLine,
            Text,
            Ts,
            Gs,
            SendEta,
            Eta,
            Probe,
            Start,
            Stop,
            Du,
            ServerStart,
            AddJob,
            Run,
            IoLog,
            UpdateJob,
            LoadFile,
            VTrigger,
            SendFile,
            JobOpt,
        ];
        ALL.into_iter().find(|o| *o as u16 == v)
    }

    /// fio's name of the command (`fio_server_op`), for logs and errors.
    pub fn name(self) -> &'static str {
        use Opcode::*;
        match self {
            Quit => "QUIT",
            Exit => "EXIT",
            Job => "JOB",
            JobLine => "JOBLINE",
            Text => "TEXT",
            Ts => "TS",
            Gs => "GS",
            SendEta => "SEND_ETA",
            Eta => "ETA",
            Probe => "PROBE",
            Start => "START",
            Stop => "STOP",
            Du => "DISK_UTIL",
            ServerStart => "SERVER_START",
            AddJob => "ADD_JOB",
            Run => "RUN",
            IoLog => "IOLOG",
            UpdateJob => "UPDATE_JOB",
            LoadFile => "LOAD_FILE",
            VTrigger => "VTRIGGER",
            SendFile => "SENDFILE",
            JobOpt => "JOB_OPT",
        }
    }
}

/// What can go wrong with a connection's messages.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("the peer speaks protocol version {got}, fiox speaks fio 3.33's version {want}")]
    Version { got: u16, want: u16 },
    #[error("bad header checksum (sent {sent:#06x}, computed {computed:#06x})")]
    HeaderCrc { sent: u16, computed: u16 },
    #[error("bad payload checksum on {op} (sent {sent:#06x}, computed {computed:#06x})")]
    PayloadCrc {
        op: String,
        sent: u16,
        computed: u16,
    },
    #[error("a fragment claims {len} bytes of payload (at most {MAX_FRAGMENT})")]
    FragmentTooLong { len: u32 },
    #[error("the message grows past {0} bytes")]
    MessageTooLong(usize),
    #[error("fragments of one message have different commands ({first} then {then})")]
    FragmentMismatch { first: u16, then: u16 },
    #[error("unknown command {0}")]
    UnknownOpcode(u16),
    #[error("the connection closed in the middle of a message")]
    Truncated,
    #[error("no complete message within {0:?} (a stalled or too slow peer)")]
    Timeout(std::time::Duration),
    #[error("malformed {what}: {why}")]
    Malformed { what: &'static str, why: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
