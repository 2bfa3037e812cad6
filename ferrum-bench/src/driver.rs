//! The live driver: replays a workload (or a trace) against a running
//! FerrumKV or Redis server over RESP and reports the server's own hit
//! ratio, `keyspace_hits / (keyspace_hits + keyspace_misses)` from `INFO`.
//!
//! # Read-through, exactly
//!
//! Each request is `GET key`; on a miss (a null reply) the driver sends
//! `SET key value [PX ttl]`, and then the next `GET` without waiting for
//! the `SET`'s reply (it reads both replies after). One connection, whose
//! commands the server executes in the order they were sent, so the server
//! sees the simulator's sequence of lookups and inserts in the same order
//! and the eviction decisions can be compared one for one; only the `GET`'s
//! reply decides what comes next, so a request costs one round trip, miss
//! or hit.
//!
//! # Capacity
//!
//! WORKLOADS.md asks for a `maxmemory` that holds 5,000 entries at steady
//! state. Bytes per entry differ between servers (and between a key with and
//! without a TTL), so [`LiveDriver::calibrate`] measures it on the server
//! itself, as [`crate::store_sim::calibrate_maxmemory`] does in process:
//! fill `capacity` keys with no limit to get a first guess and the cost of
//! one entry, then replay a prefix of the workload under that limit, read
//! `DBSIZE`, and correct by the entries missing or in excess, until the
//! server holds the capacity within 0.2%.
//!
//! A limit calibrated on a prefix need not hold the capacity for a whole
//! run: an adaptive policy's own tables grow in steps, and FerrumKV once
//! let its 16 shards drift apart in size (fixed: eviction now takes from
//! the largest shard; `--fixed-maxmemory` on the CLI shows a fixed limit
//! holding 4,995 of 5,000 entries after 1,000,000 zipf requests). So
//! that every server holds the spec's capacity for the whole run, the
//! driver also *holds* it ([`LiveConfig::hold_capacity`]): every 2,000
//! requests it reads `DBSIZE` and, when it is off by more than 0.2% (and, if
//! too few, the server is at its limit rather than still filling), corrects
//! `maxmemory` by the missing entries times the marginal bytes per entry
//! (estimated from the last two readings; the store engine holds its
//! in-process store with the same correction). The adjustments are
//! recorded in the report, and
//! [`server_shaped_sim`] replays them at the same request indices.
//!
//! # Time
//!
//! The workloads run on a virtual clock, request `i` at `i` ms; a run at
//! full speed compresses 1,000 s of virtual time into a minute, which would
//! make every `PX 10000` of the `ttl` pattern outlive its workload. Two ways
//! to keep TTLs meaningful ([`ClockMode`]):
//!
//! - **virtual** (FerrumKV started with `--enable-debug-command yes`, the
//!   default when available): before each request the driver moves the
//!   server's clock forward to the request's virtual timestamp with `DEBUG
//!   ADVANCE-CLOCK`, and every 100 virtual ms runs one `DEBUG EXPIRE-CYCLE`
//!   (the server's `hz 10` on virtual time). Both are pipelined with the
//!   `GET`, so they cost no round trip. The server then sees exactly the
//!   simulator's timeline, whatever the replay speed, and `PX` is sent
//!   unchanged. The server's clock only moves forward, so when real time
//!   runs ahead of virtual time (slow replay) it keeps real time.
//! - **real** (any server, Redis included): the server keeps its own clock
//!   and the driver scales each `PX` by the observed ratio of real to
//!   virtual time so far, so a key lives as many *requests* as the
//!   workload intends. Rate jitter makes lifetimes approximate.
//!
//! With `spacing_ms`, request `i` is sent no earlier than `i * spacing_ms`
//! real milliseconds after the start (an absolute schedule, so delays do
//! not accumulate): 1 ms spacing replays the workload in real time.

use std::thread;
use std::time::{Duration, Instant};

use ferrum_evict::{Millis, PolicyKind};
use ferrum_proto::Frame;
use serde::Serialize;

use crate::client::{Client, ClientError};
use crate::hold::Hold;
use crate::sim::SimReport;
use crate::store_sim::{StoreSimConfig, StoreSimulator};
use crate::workload::{key_name, Request, VALUE_BYTES};

/// How the server's clock relates to the workload's virtual time; see the
/// module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// The driver moves the server's clock to each request's timestamp
    /// (`DEBUG ADVANCE-CLOCK`, FerrumKV only).
    Virtual,
    /// The server's own clock; `PX` is scaled by real over virtual time.
    Real,
}

/// Which server answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// `ferrumkv` or `redis`.
    pub name: String,
    /// `ferrumkv_version` or `redis_version` from `INFO server`.
    pub version: String,
    /// Whether `DEBUG ADVANCE-CLOCK` works, so [`ClockMode::Virtual`] can
    /// be used.
    pub virtual_clock: bool,
}

/// The `INFO memory` field that `maxmemory` bounds on the server called
/// `server` (`ServerInfo::name`): Redis's `used_memory` (its clients
/// included), FerrumKV's `used_memory_dataset` (its `used_memory` adds
/// connections' buffers, which evict nothing).
pub fn bounded_memory_field(server: &str) -> &'static str {
    if server == "ferrumkv" {
        "used_memory_dataset"
    } else {
        "used_memory"
    }
}

/// Parameters of a live run.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveConfig {
    /// Entries the server should hold at steady state. Default: 5 000.
    pub capacity: usize,
    /// Requests per window of the hit-ratio series. Default: 10 000.
    pub window: u64,
    /// Real milliseconds between requests; `None` (default) is full speed.
    pub spacing_ms: Option<f64>,
    /// The clock mode; `None` (default) picks virtual when the server
    /// supports it, real otherwise.
    pub clock: Option<ClockMode>,
    /// Requests of the workload's prefix replayed per calibration round.
    /// Default: 30 000 (every pattern is at steady state by then).
    pub calibration_requests: u64,
    /// Use this `maxmemory` instead of calibrating.
    pub maxmemory_bytes: Option<u64>,
    /// Virtual milliseconds between expiry cycles in virtual-clock mode.
    /// Default: 100 (the server's `hz 10`).
    pub expire_every: Millis,
    /// Correct `maxmemory` every 2,000 requests so `DBSIZE` stays within
    /// 0.2% of `capacity` (only after a calibration, which measures the
    /// bytes per entry). Default: true.
    pub hold_capacity: bool,
    /// Also report the hit ratio of the requests from this one on
    /// ([`LiveReport::after_split_hit_ratio`]). Default: none.
    pub split_at: Option<u64>,
    /// At `split_at`, restart from a snapshot: `DEBUG RELOAD` saves the
    /// dataset, empties the server and loads the file back, as a restart
    /// does, keeping the server's clock (warm restarts, issue 38).
    /// Default: false.
    pub reload_at_split: bool,
    /// Requests sent per round trip. 1 (the default) replays exactly:
    /// each GET sees the SET of every miss before it. With `n`, a batch's
    /// GETs go together and its misses' SETs with the next batch, so a
    /// key missed twice within a batch is set twice, the clock moves once
    /// per batch, and a replay of millions of requests takes minutes
    /// instead of hours (for caches of hundreds of thousands of entries,
    /// where a batch is a sliver of the cache).
    pub pipeline: usize,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            capacity: crate::workload::CAPACITY,
            window: 10_000,
            spacing_ms: None,
            clock: None,
            calibration_requests: 30_000,
            maxmemory_bytes: None,
            expire_every: Millis(100),
            hold_capacity: true,
            split_at: None,
            reload_at_split: false,
            pipeline: 1,
        }
    }
}

/// The outcome of [`LiveDriver::calibrate`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Calibration {
    /// The `maxmemory` chosen.
    pub maxmemory_bytes: u64,
    /// Bytes one entry added to `used_memory` in the fill.
    pub per_entry_bytes: u64,
    /// Replay rounds it took (0 when `maxmemory` was given).
    pub rounds: u32,
    /// `DBSIZE` after the last round's prefix.
    pub dbsize: u64,
}

/// What one replay measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiveReport {
    /// The server.
    pub server: ServerInfo,
    /// The `maxmemory-policy`.
    pub policy: String,
    /// The pattern's name or the trace's path.
    pub source: String,
    /// The clock mode used.
    pub clock: ClockMode,
    /// Real milliseconds between requests, if paced.
    pub spacing_ms: Option<f64>,
    /// Requests replayed.
    pub requests: u64,
    /// `keyspace_hits` from `INFO stats`.
    pub hits: u64,
    /// `keyspace_misses` from `INFO stats`.
    pub misses: u64,
    /// `hits / (hits + misses)`, the server's own count.
    pub hit_ratio: f64,
    /// `GET`s the driver saw hit; equals `hits` unless something else
    /// talked to the server.
    pub driver_hits: u64,
    /// `evicted_keys`.
    pub evicted: u64,
    /// `expired_keys`.
    pub expired: u64,
    /// `SET`s the server refused (`-OOM`).
    pub rejected: u64,
    /// `DBSIZE` at the end.
    pub dbsize: u64,
    /// `used_memory` at the end.
    pub used_memory_bytes: u64,
    /// How `maxmemory` was found.
    pub calibration: Calibration,
    /// `(requests done, new maxmemory)` for each correction made to hold
    /// the capacity during the run.
    pub maxmemory_adjustments: Vec<(u64, u64)>,
    /// `maxmemory` at the end of the run.
    pub final_maxmemory_bytes: u64,
    /// Wall time of the replay (calibration excluded).
    pub elapsed_seconds: f64,
    /// Requests per second of the replay.
    pub requests_per_second: f64,
    /// Real milliseconds per virtual millisecond over the replay.
    pub time_scale: f64,
    /// Requests per window of `windows`.
    pub window: u64,
    /// The hit ratio of each window, as the driver saw the replies.
    pub windows: Vec<f64>,
    /// With [`LiveConfig::split_at`]: the hit ratio (as the driver saw
    /// the replies) of the requests from the split on.
    pub after_split_hit_ratio: Option<f64>,
}

/// What a replay counted on the client side.
#[derive(Clone, Debug, Default)]
struct ReplayStats {
    requests: u64,
    hits: u64,
    rejected: u64,
    elapsed: Duration,
    virtual_ms: u64,
    windows: Vec<f64>,
    adjustments: Vec<(u64, u64)>,
    final_maxmemory: u64,
    /// Requests and driver-seen hits from `split_at` on.
    after_split: (u64, u64),
}

/// Errors of the live driver.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Talking to the server failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The server cannot do what was asked.
    #[error("{0}")]
    Unsupported(String),
}

/// A read-through client of a live server; see the module docs.
#[derive(Debug)]
pub struct LiveDriver {
    client: Client,
    server: ServerInfo,
    value: Vec<u8>,
    /// Real over virtual time of the last replay, the first guess for `PX`
    /// scaling in the next one.
    last_time_scale: Option<f64>,
}

impl LiveDriver {
    /// Connects and identifies the server.
    ///
    /// # Errors
    ///
    /// If the connection or `INFO server` fails.
    pub fn connect(addr: impl std::net::ToSocketAddrs) -> Result<LiveDriver, DriverError> {
        let mut client = Client::connect(addr)?;
        let info = client.info("server")?;
        let (name, version) = match info.get("ferrumkv_version") {
            Some(v) => ("ferrumkv", v.clone()),
            None => (
                "redis",
                info.get("redis_version").cloned().unwrap_or_default(),
            ),
        };
        let virtual_clock = client.call(&["DEBUG", "ADVANCE-CLOCK", "0"]).is_ok();
        Ok(LiveDriver {
            client,
            server: ServerInfo {
                name: name.to_owned(),
                version,
                virtual_clock,
            },
            value: vec![b'v'; VALUE_BYTES as usize],
            last_time_scale: None,
        })
    }

    /// The server this driver talks to.
    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// The clock mode `requested` resolves to on this server.
    ///
    /// # Errors
    ///
    /// [`DriverError::Unsupported`] for virtual time on a server without
    /// `DEBUG ADVANCE-CLOCK`.
    pub fn clock_mode(&self, requested: Option<ClockMode>) -> Result<ClockMode, DriverError> {
        match requested {
            Some(ClockMode::Virtual) if !self.server.virtual_clock => {
                Err(DriverError::Unsupported(format!(
                    "{} has no DEBUG ADVANCE-CLOCK (start FerrumKV with --enable-debug-command yes, or use --clock real)",
                    self.server.name
                )))
            }
            Some(mode) => Ok(mode),
            None if self.server.virtual_clock => Ok(ClockMode::Virtual),
            None => Ok(ClockMode::Real),
        }
    }

    /// Empties the server and starts a cell: a fresh policy (switching
    /// through `noeviction` rebuilds it with its seed), the given
    /// `maxmemory`, zeroed counters.
    ///
    /// # Errors
    ///
    /// If the server refuses a command, e.g. a policy it does not know.
    pub fn reset(&mut self, policy: PolicyKind, maxmemory_bytes: u64) -> Result<(), DriverError> {
        Ok(reset_server(&mut self.client, policy, maxmemory_bytes)?)
    }

    /// The figure `maxmemory` bounds ([`bounded_memory_field`]).
    fn used_memory(&mut self) -> Result<u64, DriverError> {
        let info = self.client.info("memory")?;
        Ok(field(&info, bounded_memory_field(&self.server.name)))
    }

    /// Finds the `maxmemory` at which the server holds `config.capacity`
    /// entries at steady state on the requests `prefix` yields (called once
    /// per round); see the module docs.
    ///
    /// # Errors
    ///
    /// If the server fails or refuses a command.
    pub fn calibrate<I>(
        &mut self,
        policy: PolicyKind,
        mut prefix: impl FnMut() -> I,
        config: &LiveConfig,
    ) -> Result<Calibration, DriverError>
    where
        I: IntoIterator<Item = Request>,
    {
        let capacity = config.capacity.max(1) as u64;
        self.reset(policy, 0)?;
        let empty = self.used_memory()?;
        for id in 0..capacity {
            self.client.queue(&[
                b"SET".as_slice(),
                key_name(id).as_bytes(),
                self.value.as_slice(),
            ]);
            if id % 256 == 255 || id + 1 == capacity {
                self.client.flush()?;
                for _ in 0..=(id % 256) {
                    self.client.read_ok()?;
                }
            }
        }
        let filled = self.used_memory()?;
        let per_entry = (filled.saturating_sub(empty) / capacity).max(1);
        let tolerance = (capacity / 500).max(1) as i64;
        let mut maxmemory = filled;
        let mut best: Option<Calibration> = None;
        // The run holds the capacity anyway (see `hold_capacity`), so a
        // few rounds are enough to start it close.
        for round in 1..=4 {
            self.reset(policy, maxmemory)?;
            let requests = prefix()
                .into_iter()
                .take(config.calibration_requests as usize);
            // Calibration is about bytes, not time: replay at full speed.
            let full_speed = LiveConfig {
                spacing_ms: None,
                ..config.clone()
            };
            self.replay(requests, &full_speed, None, &mut |_| {})?;
            let dbsize = self.client.call_int(&["DBSIZE"])?.max(0) as u64;
            let missing = capacity as i64 - dbsize as i64;
            let this = Calibration {
                maxmemory_bytes: maxmemory,
                per_entry_bytes: per_entry,
                rounds: round,
                dbsize,
            };
            let better = best
                .as_ref()
                .is_none_or(|b| (capacity as i64 - b.dbsize as i64).abs() > missing.abs());
            if better {
                best = Some(this);
            }
            if missing.abs() <= tolerance {
                break;
            }
            maxmemory = maxmemory.saturating_add_signed(missing * per_entry as i64);
        }
        let mut best = best.unwrap_or(Calibration {
            maxmemory_bytes: maxmemory,
            per_entry_bytes: per_entry,
            rounds: 0,
            dbsize: 0,
        });
        best.rounds = best.rounds.max(1);
        Ok(best)
    }

    /// Calibrates (unless `config.maxmemory_bytes` is set), then replays
    /// `requests()` from an empty server under `policy` and reads the
    /// server's counters. `requests` is called once per calibration round
    /// and once for the run, and must yield the same stream each time.
    /// `progress` is called with the requests done after each window.
    ///
    /// # Errors
    ///
    /// If the server fails or refuses a command (such as a policy it does
    /// not have).
    pub fn run<I>(
        &mut self,
        policy: PolicyKind,
        source: &str,
        mut requests: impl FnMut() -> I,
        config: &LiveConfig,
        progress: &mut dyn FnMut(u64),
    ) -> Result<LiveReport, DriverError>
    where
        I: IntoIterator<Item = Request>,
    {
        let clock = self.clock_mode(config.clock)?;
        let config = LiveConfig {
            clock: Some(clock),
            ..config.clone()
        };
        let calibration = match config.maxmemory_bytes {
            Some(maxmemory_bytes) => Calibration {
                maxmemory_bytes,
                per_entry_bytes: 0,
                rounds: 0,
                dbsize: 0,
            },
            None => self.calibrate(policy, &mut requests, &config)?,
        };
        self.reset(policy, calibration.maxmemory_bytes)?;
        let hold = (config.hold_capacity && calibration.per_entry_bytes > 0).then(|| {
            Hold::new(
                config.capacity as u64,
                calibration.per_entry_bytes,
                calibration.maxmemory_bytes,
            )
        });
        let stats = self.replay(requests(), &config, hold, progress)?;
        let info = self.client.info("stats")?;
        let (hits, misses) = (
            field(&info, "keyspace_hits"),
            field(&info, "keyspace_misses"),
        );
        let dbsize = self.client.call_int(&["DBSIZE"])?.max(0) as u64;
        let elapsed = stats.elapsed.as_secs_f64();
        Ok(LiveReport {
            server: self.server.clone(),
            policy: policy.to_string(),
            source: source.to_owned(),
            clock,
            spacing_ms: config.spacing_ms,
            requests: stats.requests,
            hits,
            misses,
            hit_ratio: hits as f64 / (hits + misses).max(1) as f64,
            driver_hits: stats.hits,
            evicted: field(&info, "evicted_keys"),
            expired: field(&info, "expired_keys"),
            rejected: stats.rejected,
            dbsize,
            used_memory_bytes: self.used_memory()?,
            final_maxmemory_bytes: match stats.final_maxmemory {
                0 => calibration.maxmemory_bytes,
                held => held,
            },
            maxmemory_adjustments: stats.adjustments,
            calibration,
            elapsed_seconds: elapsed,
            requests_per_second: stats.requests as f64 / elapsed.max(1e-9),
            time_scale: 1000.0 * elapsed / stats.virtual_ms.max(1) as f64,
            window: config.window,
            windows: stats.windows,
            after_split_hit_ratio: config
                .split_at
                .map(|_| stats.after_split.1 as f64 / stats.after_split.0.max(1) as f64),
        })
    }

    /// The read-through loop; see the module docs for the clock handling.
    /// Requests go in batches of [`LiveConfig::pipeline`]: the batch's
    /// GETs in one write, then its misses' SETs with the next batch's.
    fn replay(
        &mut self,
        requests: impl IntoIterator<Item = Request>,
        config: &LiveConfig,
        mut hold: Option<Hold>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ReplayStats, DriverError> {
        let clock = self.clock_mode(config.clock)?;
        let every = config.expire_every.0.max(1);
        let window = config.window.max(1);
        let pipeline = config.pipeline.max(1);
        let start = Instant::now();
        let mut stats = ReplayStats::default();
        let (mut first, mut advanced, mut next_expire) = (None, 0u64, every);
        let (mut window_hits, mut window_len) = (0u64, 0u64);
        let prior_scale = config.spacing_ms.or(self.last_time_scale);
        // Misses' `SET`s whose replies are still to be read.
        let mut set_unread = 0;
        let mut requests = requests.into_iter().peekable();
        let mut batch: Vec<(Request, String)> = Vec::with_capacity(pipeline);
        while requests.peek().is_some() {
            if config.reload_at_split && config.split_at == Some(stats.requests) {
                self.read_set_replies(&mut set_unread, &mut stats)?;
                self.client.call(&["DEBUG", "RELOAD"])?;
            }
            // A batch ends before the split, a capacity correction or a
            // window's end, so each happens where it would one by one.
            let mut room = pipeline as u64;
            room = room.min(Hold::EVERY - stats.requests % Hold::EVERY);
            room = room.min(window - window_len);
            if let Some(at) = config.split_at.filter(|&at| at > stats.requests) {
                room = room.min(at - stats.requests);
            }
            batch.clear();
            batch.extend((requests.by_ref().take(room as usize)).map(|r| (r, key_name(r.key_id))));
            // The batch's first request sets the clock and the pace.
            let t0 = *first.get_or_insert(batch[0].0.at.0);
            let v = batch[0].0.at.0.saturating_sub(t0);
            stats.virtual_ms = v;
            if let Some(spacing) = config.spacing_ms {
                let due = Duration::from_secs_f64(v as f64 * spacing / 1000.0);
                if let Some(wait) = due.checked_sub(start.elapsed()) {
                    thread::sleep(wait);
                }
            }
            let mut pending = 0;
            if clock == ClockMode::Virtual {
                let server_rel = start.elapsed().as_millis() as u64 + advanced;
                if v > server_rel {
                    let step = (v - server_rel).to_string();
                    self.client.queue(&["DEBUG", "ADVANCE-CLOCK", &step]);
                    advanced += v - server_rel;
                    pending += 1;
                }
                if v >= next_expire {
                    self.client.queue(&["DEBUG", "EXPIRE-CYCLE"]);
                    next_expire = (v / every + 1) * every;
                    pending += 1;
                }
            }
            for (_, key) in &batch {
                self.client.queue(&[b"GET".as_slice(), key.as_bytes()]);
            }
            self.client.flush()?;
            self.read_set_replies(&mut set_unread, &mut stats)?;
            for _ in 0..pending {
                self.client.read_ok()?;
            }
            for (req, key) in &batch {
                let hit = match self.client.read_ok()? {
                    Frame::Null => false,
                    Frame::Bulk(_) => true,
                    reply => {
                        return Err(ClientError::Unexpected {
                            command: format!("GET {key}"),
                            reply: format!("{reply:?}"),
                        }
                        .into())
                    }
                };
                if !hit {
                    let px = req.ttl.map(|ttl| match clock {
                        ClockMode::Virtual => ttl.0,
                        ClockMode::Real => {
                            let measured = (v >= 2_000)
                                .then(|| start.elapsed().as_secs_f64() * 1000.0 / v as f64);
                            let scale = measured.or(prior_scale).unwrap_or(1.0);
                            ((ttl.0 as f64 * scale).ceil() as u64).max(1)
                        }
                    });
                    self.queue_set(key, px);
                    set_unread += 1;
                }
                if config.split_at.is_some_and(|at| stats.requests >= at) {
                    stats.after_split.0 += 1;
                    stats.after_split.1 += u64::from(hit);
                }
                stats.requests += 1;
                stats.hits += u64::from(hit);
                window_hits += u64::from(hit);
                window_len += 1;
            }
            self.client.flush()?;
            // A correction after the last request could not take effect
            // before the final DBSIZE, so none is made there.
            if stats.requests % Hold::EVERY == 0 && requests.peek().is_some() {
                if let Some(hold) = &mut hold {
                    self.read_set_replies(&mut set_unread, &mut stats)?;
                    if let Some(adjusted) = self.hold_capacity(hold)? {
                        stats.adjustments.push((stats.requests, adjusted));
                    }
                }
            }
            if window_len == window {
                stats.windows.push(window_hits as f64 / window as f64);
                (window_hits, window_len) = (0, 0);
                progress(stats.requests);
            }
        }
        self.read_set_replies(&mut set_unread, &mut stats)?;
        if window_len > 0 {
            stats.windows.push(window_hits as f64 / window_len as f64);
        }
        stats.elapsed = start.elapsed();
        stats.final_maxmemory = hold.map_or(0, |h| h.maxmemory());
        if stats.virtual_ms >= 2_000 {
            self.last_time_scale =
                Some(stats.elapsed.as_secs_f64() * 1000.0 / stats.virtual_ms as f64);
        }
        Ok(stats)
    }

    /// Reads `DBSIZE` and `used_memory` and applies what [`Hold::correct`]
    /// makes of them; returns the new limit if it changed.
    fn hold_capacity(&mut self, hold: &mut Hold) -> Result<Option<u64>, DriverError> {
        let dbsize = self.client.call_int(&["DBSIZE"])?.max(0) as u64;
        let Some(maxmemory) = hold.correct(dbsize, self.used_memory()?) else {
            return Ok(None);
        };
        let value = maxmemory.to_string();
        self.client.call(&["CONFIG", "SET", "maxmemory", &value])?;
        Ok(Some(maxmemory))
    }

    /// Reads the replies of the misses' `SET`s sent earlier, counting a
    /// refusal (`-OOM` under `noeviction`) as rejected.
    fn read_set_replies(
        &mut self,
        unread: &mut u64,
        stats: &mut ReplayStats,
    ) -> Result<(), DriverError> {
        for _ in 0..std::mem::take(unread) {
            stats.rejected += u64::from(matches!(self.client.read()?, Frame::Error(_)));
        }
        Ok(())
    }

    /// Queues a miss's `SET`, sent with the next write.
    fn queue_set(&mut self, key: &str, px: Option<u64>) {
        match px {
            Some(px) => self.client.queue(&[
                b"SET".as_slice(),
                key.as_bytes(),
                &self.value,
                b"PX",
                px.to_string().as_bytes(),
            ]),
            None => self
                .client
                .queue(&[b"SET".as_slice(), key.as_bytes(), &self.value]),
        }
    }
}

/// Empties the server `client` talks to and starts a cell: a fresh policy
/// (switching through `noeviction` rebuilds it with its seed), the given
/// `maxmemory`, zeroed counters.
///
/// # Errors
///
/// If the server refuses a command, e.g. a policy it does not know.
pub fn reset_server(
    client: &mut Client,
    policy: PolicyKind,
    maxmemory_bytes: u64,
) -> Result<(), ClientError> {
    client.call(&["CONFIG", "SET", "maxmemory", "0"])?;
    client.call(&["CONFIG", "SET", "maxmemory-policy", "noeviction"])?;
    client.call(&["FLUSHALL"])?;
    client.call(&["CONFIG", "SET", "maxmemory-policy", policy.as_str()])?;
    client.call(&["CONFIG", "SET", "maxmemory", &maxmemory_bytes.to_string()])?;
    client.call(&["CONFIG", "RESETSTAT"])?;
    Ok(())
}

/// A counter of an `INFO` reply, 0 when absent or not a number.
pub(crate) fn field(info: &std::collections::HashMap<String, String>, name: &str) -> u64 {
    info.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The policy seed FerrumKV's server builds its policies and its keyspace
/// router with (the `PolicyConfig` default): a store-engine run that uses it
/// has the server's exact structure.
pub const SERVER_POLICY_SEED: u64 = 0;

/// FerrumKV's shard count: keys are spread over 16 shards, each with its
/// own policy, and eviction takes from the largest.
pub const SERVER_SHARDS: usize = 16;

/// Replays `requests` through the store engine built like the server
/// (16 shards, the server's policy seed) under `maxmemory_bytes` — the live
/// run's calibrated limit — changed to each `(requests done, maxmemory)` of
/// `adjustments` at that point, as the live run did, so the two hit ratios
/// answer the same question.
pub fn server_shaped_sim(
    policy: PolicyKind,
    requests: impl IntoIterator<Item = Request>,
    maxmemory_bytes: u64,
    adjustments: &[(u64, u64)],
    window: u64,
) -> (SimReport, usize) {
    let config = StoreSimConfig {
        shards: SERVER_SHARDS,
        window,
        ..StoreSimConfig::default()
    };
    let mut sim =
        StoreSimulator::with_maxmemory(policy, SERVER_POLICY_SEED, config, maxmemory_bytes);
    let mut adjustments = adjustments.iter().peekable();
    for (i, req) in requests.into_iter().enumerate() {
        while let Some(&(_, bytes)) = adjustments.next_if(|(at, _)| *at <= i as u64) {
            sim.store().set_maxmemory_bytes(bytes);
            sim.store().enforce_maxmemory(req.at);
        }
        sim.request(&req);
    }
    let dbsize = sim.dbsize();
    (sim.finish(), dbsize)
}
