//! Hash slots: see [`ferrum_proto::slot`], shared with ferrum-bench's
//! cluster-aware client.

pub(crate) use ferrum_proto::slot::{key_slot, SLOTS};
