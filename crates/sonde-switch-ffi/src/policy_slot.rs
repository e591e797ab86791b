//! What a connection holds of `sonde_switch_set_policy`: its policy and the origin of the
//! policy's clock. Its own file so that the connection handle (`api`) and the policy calls
//! (`policy`) both name it without either naming the other's half.

use sonde_switch::policy::Policy;
use std::time::Instant;

/// A connection's policy and the origin of its clock.
#[derive(Debug)]
pub(crate) struct PolicySlot {
    pub(crate) policy: Policy,
    pub(crate) since: Instant,
}
