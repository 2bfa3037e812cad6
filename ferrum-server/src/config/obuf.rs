//! `client-output-buffer-limit`: per client class, how much unwritten
//! output a client may hold, in Redis 7's syntax (groups of
//! `<class> <hard> <soft> <soft-seconds>`) and rendering.

use super::syntax::parse_memory;
use super::Config;

/// One client class's output buffer limits: disconnect a client whose
/// pending output exceeds `hard_bytes`, or stays over `soft_bytes` for
/// `soft_seconds`. Zero disables a limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputBufferLimit {
    /// Disconnect as soon as pending output exceeds this.
    pub hard_bytes: u64,
    /// Disconnect when pending output stays above this for `soft_seconds`.
    pub soft_bytes: u64,
    /// How long output may stay above `soft_bytes`.
    pub soft_seconds: u64,
}

impl OutputBufferLimit {
    /// Whether `pending` bytes of output break this limit, as Redis's
    /// `checkClientOutputBufferLimits` decides: at or over the hard limit,
    /// or at or over the soft limit for more than `soft_seconds` whole
    /// seconds. `over_soft_since` is when (in milliseconds on the caller's
    /// clock, read as `now_ms`) the output went over the soft limit; this
    /// starts and stops that clock.
    ///
    /// Redis counts the time on its one-second clock, so a soft limit of 0
    /// seconds lets the output stay over it for the rest of the second it
    /// went over in, and breaks at the first check in a later second; so
    /// does this, on the caller's clock.
    pub fn is_broken(&self, pending: u64, now_ms: u64, over_soft_since: &mut Option<u64>) -> bool {
        let hard = self.hard_bytes > 0 && pending >= self.hard_bytes;
        if self.soft_bytes == 0 || pending < self.soft_bytes {
            *over_soft_since = None;
            return hard;
        }
        let since = *over_soft_since.get_or_insert(now_ms);
        hard || now_ms >= self.soft_deadline_ms(since)
    }

    /// When output over the soft limit since `since_ms` breaks it, on the
    /// same clock: the start of the first whole second past `soft_seconds`.
    pub fn soft_deadline_ms(&self, since_ms: u64) -> u64 {
        (since_ms / 1000)
            .saturating_add(self.soft_seconds)
            .saturating_add(1)
            .saturating_mul(1000)
    }
}

/// `client-output-buffer-limit` for each client class Redis knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputBufferLimits {
    /// Ordinary clients.
    pub normal: OutputBufferLimit,
    /// Replicas (`replica`, or `slave` as Redis prints it). Unused until
    /// FerrumKV replicates, kept so the value round-trips.
    pub replica: OutputBufferLimit,
    /// Clients in subscribed (pub/sub) mode.
    pub pubsub: OutputBufferLimit,
}

/// Redis's `client-output-buffer-limit` syntax: groups of
/// `<class> <hard> <soft> <soft-seconds>`. Only the classes named change.
pub(super) fn set_output_buffer_limits(
    config: &mut Config,
    words: Vec<String>,
) -> Result<(), String> {
    if words.len() % 4 != 0 {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut limits = config.client_output_buffer_limit;
    for group in words.chunks_exact(4) {
        let slot = match group[0].to_ascii_lowercase().as_str() {
            "normal" => &mut limits.normal,
            "replica" | "slave" => &mut limits.replica,
            "pubsub" => &mut limits.pubsub,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let parsed = (
            parse_memory(&group[1]),
            parse_memory(&group[2]),
            group[3].parse::<u64>().ok(),
        );
        let (Some(hard_bytes), Some(soft_bytes), Some(soft_seconds)) = parsed else {
            return Err(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.".into(),
            );
        };
        *slot = OutputBufferLimit {
            hard_bytes,
            soft_bytes,
            soft_seconds,
        };
    }
    config.client_output_buffer_limit = limits;
    Ok(())
}

/// As Redis 7 prints it, every class, in bytes, with `slave` for replicas.
pub(super) fn render_output_buffer_limits(config: &Config) -> String {
    let l = &config.client_output_buffer_limit;
    [
        ("normal", l.normal),
        ("slave", l.replica),
        ("pubsub", l.pubsub),
    ]
    .iter()
    .map(|(class, x)| {
        format!(
            "{class} {} {} {}",
            x.hard_bytes, x.soft_bytes, x.soft_seconds
        )
    })
    .collect::<Vec<_>>()
    .join(" ")
}
