//! Setting a key's access time from outside: `RESTORE ... IDLETIME`.

use ferrum_evict::Millis;

use crate::EntryMut;

impl EntryMut<'_> {
    /// Sets when the key was last accessed (what `OBJECT IDLETIME`
    /// reports), as `RESTORE ... IDLETIME` does. The eviction policy's own
    /// recency order is left as it is.
    pub fn set_last_access(&mut self, at: Millis) {
        self.block.set_last_access(at.0);
    }
}
