//! The lab's integration tests, as root, in namespaces the tests create (see `util`).
//!
//! Each test takes the serial lock, uses its own prefix, and holds a `Cleanup` guard that
//! removes whatever is left under that prefix even when the test fails. Without root or a
//! tool the tests print why and pass, unless `SONDE_REQUIRE_ALL=1`. A lab needs only root and
//! iproute2 (`bare` proves it); the ping tests also need `ping`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod bare;
mod impair;
mod topology;
mod util;
