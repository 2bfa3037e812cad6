//! FerrumKV's keyspace: values, expiry, memory accounting and statistics.
//!
//! The store never reads a clock, spawns a task or touches a socket: every
//! call takes the current time as a [`Millis`] argument, so the server and
//! the hit-ratio simulator drive the very same code, one with real time and
//! one with virtual time.
//!
//! ```
//! use bytes::Bytes;
//! use ferrum_store::{Access, Millis, Store, StoreConfig, Value, ValueRef};
//!
//! let store = Store::new(StoreConfig::default());
//! let key = Bytes::from_static(b"greeting");
//! let now = Millis(1_000);
//! {
//!     let mut locked = store.lock_key(&key);
//!     let shard = locked.shard(&key);
//!     shard.insert(0, key.clone(), Value::str(b"hello"), Some(Millis(2_000)), now);
//!     let entry = shard.lookup(0, &key, now, Access::Read).expect("just stored");
//!     assert_eq!(entry.value(), ValueRef::Str(b"hello"));
//!     // At its deadline the key is gone, whether or not anything removed it.
//!     assert!(shard.lookup(0, &key, Millis(2_000), Access::Read).is_none());
//! }
//! assert_eq!(store.stats().keyspace_hits, 1);
//! assert_eq!(store.stats().expired_keys, 1);
//! ```

mod block;
mod entry;
mod error;
mod expired;
pub mod glob;
mod keyspace;
pub mod memory;
pub mod snapshot;
mod stats;
mod store;
pub mod types;
mod value;

pub use entry::{Entry, EntryMut};
pub use error::StoreError;
pub use expired::ExpiredLog;
pub use ferrum_evict::{ControllerState, EntryId, Millis, PolicyConfig, PolicyKind};
pub use keyspace::{Access, ExpireCycle, Shard};
pub use stats::KeyspaceStats;
pub use store::{Locked, Store, StoreConfig};
pub use value::{CollRef, Collection, Str, Typed, Value, ValueKind, ValueRef, LAZYFREE_THRESHOLD};
